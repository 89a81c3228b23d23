"""tracker_tui: the Textual app and the `tracker-tui` command line."""

__version__ = "0.1.0"
"""The package's version (pyproject.toml reads it from here); `tracker-tui --version`."""
