"""Command line and the terminal table."""
