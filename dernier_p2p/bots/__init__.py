"""Players that choose moves from their own view of the table."""
