"""Screens and dialogs, one per module."""
