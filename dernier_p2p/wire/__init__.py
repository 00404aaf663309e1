"""Canonical encoding, hashing, signatures and transcript records."""
