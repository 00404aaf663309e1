"""Adapters: one per implementation, speaking the channel of ``interop/README.md``."""
