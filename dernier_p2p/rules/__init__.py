"""The pure rules engine of the four Dernier variants."""
