"""`make bench` (benchmarks/run_all.py) puts each run's table into RESULTS.md and leaves what
engineers wrote beside the tables alone: earlier runs overwrote the whole file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchmark_scripts import load

run_all = load("run_all")

WRITTEN = """# Benchmark results

## quick (old)

### A branch against main, written by hand (2026-11-26)

| figure | main | branch |
|---|---|---|
| speed | 1 | 2 |
"""


@pytest.fixture
def bench_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A benchmarks folder with one real script that prints its table and one that fails."""
    (tmp_path / "quick.py").write_text(
        "import sys\nprint('| figure | measured | goal |')\nprint('| speed | ' + "
        "(sys.argv[1] if len(sys.argv) > 1 else 'fast') + ' | - |')\n",
        encoding="utf-8",
    )
    (tmp_path / "broken.py").write_text(
        "import sys\nprint('it broke', file=sys.stderr)\nsys.exit(3)\n", encoding="utf-8"
    )
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    monkeypatch.setattr(run_all, "AGAIN", {"quick": ["huge"]})
    return tmp_path


def _run(out: Path, *only: str) -> int:
    argv = ["run_all.py", "--out", str(out), "--only", *only]
    old = sys.argv
    sys.argv = argv
    try:
        return int(run_all.main())
    finally:
        sys.argv = old


def test_a_run_keeps_what_was_written_by_hand_and_adds_its_sections(bench_dir: Path) -> None:
    out = bench_dir / "RESULTS.md"
    out.write_text(WRITTEN, encoding="utf-8")

    assert _run(out, "quick") == 0

    text = out.read_text(encoding="utf-8")
    assert text.startswith(WRITTEN.rstrip("\n"))
    assert "| speed | fast | - |" in text
    assert "| speed | huge | - |" in text
    assert text.count("<!-- make bench: quick.py -->") == 1
    assert text.count("<!-- make bench: quick.py huge -->") == 1


def test_a_second_run_replaces_its_own_section_only(bench_dir: Path) -> None:
    out = bench_dir / "RESULTS.md"
    out.write_text(WRITTEN, encoding="utf-8")
    assert _run(out, "quick") == 0
    first = out.read_text(encoding="utf-8")
    (bench_dir / "quick.py").write_text(
        "print('| figure | measured | goal |')\nprint('| speed | faster | - |')\n",
        encoding="utf-8",
    )
    with_note = first + "\n### A note written after the run\n\nkept\n"
    out.write_text(with_note, encoding="utf-8")

    assert _run(out, "quick") == 0

    text = out.read_text(encoding="utf-8")
    assert "| speed | fast | - |" not in text
    assert text.count("| speed | faster | - |") == 2
    assert text.startswith(WRITTEN.rstrip("\n"))
    assert text.endswith("### A note written after the run\n\nkept\n")
    assert text.count("<!-- make bench: quick.py -->") == 1


def test_a_failed_script_is_told_in_its_section_and_in_the_exit_status(bench_dir: Path) -> None:
    out = bench_dir / "RESULTS.md"

    assert _run(out, "broken") == 1

    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results\n")
    assert "Failed with exit status 3:" in text
    assert "it broke" in text
