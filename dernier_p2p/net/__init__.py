"""trio networking: framing, the host's relay, discovery, timers."""
