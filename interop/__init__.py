"""The dernier-p2p conformance suite: cases, the runner and the reference adapter."""
