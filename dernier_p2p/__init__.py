"""dernier_p2p: serverless peer-to-peer Dernier with mental-poker shuffling."""

__version__ = "0.3.0"
"""The program's release; the protocol it speaks is
:data:`dernier_p2p.wire.version.PROTOCOL_VERSION`."""
