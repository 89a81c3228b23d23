"""The model of issue 15 (tests/model) at length: thousands of examples, each seed printed.

    .venv/bin/python benchmarks/model_run.py [--examples 2000] [--batch 25] [--seed 1500]
                                             [--steps 30] [--configs full spec]
                                             [--seconds S]

Two or three clients and a colleague against the reference service in-process on virtual time
(`tests/model/model_machine.py`), once against the service with every CONTRACT extension and
once against it stripped to SPEC alone. Examples are generated in batches of `--batch`, each
batch under its own Hypothesis seed (`--seed`, `--seed + 1`, ...), printed as it starts so any
batch can be run again alone (`--seed N --examples B --batch B`). `--seconds` bounds each
configuration's wall time as well: no batch starts after it (on a shared machine the number of
examples a quarter of an hour holds varies; the table says how many ran). Violations are
collected rather than raised (no shrinking here: `tests/model/test_model.py` is where a found
bug gets its pinned example), each with the steps that led to it, written to stderr.

The table goes to stdout: per configuration, examples, steps, violations, CPU and wall time;
then how often each rule ran and how many violations each invariant saw.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this folder comes first on sys.path, where benchmarks/cache.py would shadow
# the `cache` package: put the repository root there instead, and the model's folder after it.
if Path(sys.path[0]).resolve() == HERE:
    sys.path[0] = str(ROOT)
sys.path.insert(1, str(ROOT / "tests" / "model"))

from hypothesis import HealthCheck, Phase, seed, settings  # noqa: E402
from hypothesis.stateful import get_state_machine_test  # noqa: E402
from model_machine import Model, model_for  # noqa: E402
from model_world import FULL, SPEC, Config  # noqa: E402

CONFIGS = {"full": FULL, "spec": SPEC}


def run_config(
    config: Config, args: argparse.Namespace, found: Counter[str], tallies: dict[str, Counter[str]]
) -> list[str]:
    tallies_before = Counter(Model.tallies) + Counter(
        {f"accepted: {k}": v for k, v in Model.accepted.items()}
    )
    examples_before = Model.rule_counts.get("start", 0)
    steps_before = sum(Model.rule_counts.values())
    violations: list[tuple[str, str, list[str]]] = []
    Model.collector = violations
    cpu, wall = time.process_time(), time.perf_counter()
    batches = max(1, -(-args.examples // args.batch))
    errors = 0
    for number in range(batches):
        if args.seconds is not None and time.perf_counter() - wall > args.seconds:
            batches = number
            break
        batch_seed = args.seed + number
        print(f"{config.name}: batch {number + 1}/{batches}, seed {batch_seed}", file=sys.stderr)
        chosen = settings(
            max_examples=args.batch,
            stateful_step_count=args.steps,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        test = seed(batch_seed)(get_state_machine_test(model_for(config), settings=chosen))
        before = len(violations)
        try:
            test()
        except Exception as error:  # an example that crashed: counted, and the run goes on
            errors += 1
            steps = [
                line.removeprefix("state.")
                for note in getattr(error, "__notes__", [])
                for line in note.splitlines()
                if line.startswith("state.")
            ]
            violations.append(("error", f"{type(error).__name__}: {error}", steps))
        for category, message, steps in violations[before:]:
            print(f"  VIOLATION [{category}] seed {batch_seed}: {message}", file=sys.stderr)
            for step in steps:
                print(f"    state.{step}", file=sys.stderr)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    Model.collector = None
    for category, _message, _steps in violations:
        found[f"{config.name}: {category}"] += 1
    tallies_after = Counter(Model.tallies) + Counter(
        {f"accepted: {k}": v for k, v in Model.accepted.items()}
    )
    tallies[config.name] = tallies_after - tallies_before
    examples = Model.rule_counts.get("start", 0) - examples_before
    steps = sum(Model.rule_counts.values()) - steps_before - examples
    seeds = f"{args.seed}-{args.seed + batches - 1}"
    return [
        f"| {config.name} | {examples} | {steps} | {len(violations)} | {errors} | {seeds} "
        f"| {cpu:.0f} | {wall:.0f} |"
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2000, help="per configuration")
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--seed", type=int, default=1500)
    parser.add_argument("--steps", type=int, default=30, help="most steps in an example")
    parser.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument(
        "--seconds", type=float, default=None, help="per configuration: no batch starts after"
    )
    args = parser.parse_args()
    found: Counter[str] = Counter()
    tallies: dict[str, Counter[str]] = {}
    rows = [
        "| server | examples | steps | violations | crashed examples | seeds | CPU s | wall s |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for name in args.configs:
        rows += run_config(CONFIGS[name], args, found, tallies)
    print("\n".join(rows))
    print()
    names = sorted({*Model.tallies, "accepted: twin", "accepted: altered"})
    print("| count | " + " | ".join(tallies) + " |")
    print("|---|" + "---:|" * len(tallies))
    for name in names:
        print(f"| {name} | " + " | ".join(str(c.get(name, 0)) for c in tallies.values()) + " |")
    print()
    print("| rule | times run |")
    print("|---|---:|")
    for rule, count in sorted(Model.rule_counts.items()):
        print(f"| {rule} | {count} |")
    print()
    print("| invariant | violations |")
    print("|---|---:|")
    for category in sorted(found) or ["(none)"]:
        print(f"| {category} | {found.get(category, 0)} |")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
