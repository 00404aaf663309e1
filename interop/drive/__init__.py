"""A live conformance check of a client's behaviour (PROTOCOL.md 23.2): ``python -m
interop.drive --client "CMD"`` runs the client under test, a seat that joins the table it is
given, through scripted live scenarios on loopback (see :mod:`interop.drive.scenarios`)."""
