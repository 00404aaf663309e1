"""dernier_p2p: serverless peer-to-peer Dernier with mental-poker shuffling."""

__version__ = "0.1.0"
