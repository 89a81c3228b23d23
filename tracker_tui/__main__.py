"""`python -m tracker_tui` runs the command line."""

import sys

from tracker_tui.cli import run

sys.exit(run())
