"""Widgets of the app, one module each, talking to the rest of the app through messages."""
