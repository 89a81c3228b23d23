"""The `tracker-server` script: checks that the service's packages are installed, then runs
`server.cli`.

The service runs on FastAPI and uvicorn, which come with the `service` extra: an install of the
client alone (`pip install tracker-tui`) has this script but not them, and is told so in one
line, with status 2, instead of a traceback from an import deep in the service.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

SERVICE_PACKAGES = ("fastapi", "uvicorn")
"""What the `service` extra of pyproject.toml installs."""


def missing_packages() -> list[str]:
    return [name for name in SERVICE_PACKAGES if importlib.util.find_spec(name) is None]


def main(argv: Sequence[str] | None = None) -> int:
    missing = missing_packages()
    if missing:
        print(
            f"tracker-server: the service needs {' and '.join(missing)}, from the 'service' "
            "extra: pip install 'tracker-tui[service]' (in a checkout: make serve)",
            file=sys.stderr,
        )
        return 2
    from server.cli import main as run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
