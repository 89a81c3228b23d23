"""tracker_tui."""
