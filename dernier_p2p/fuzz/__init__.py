"""A fuzz harness for everything that reads bytes from a peer or a file.

``python -m dernier_p2p.fuzz TARGET --cases N`` runs structure-aware mutations of real protocol
data against one target and prints cases per second, crashes (any exception that is not a
documented protocol error), hangs (a case over the time limit) and peak memory, saving a
reproducer for each crash. Targets: ``frames`` (every frame kind, decoded and checked as the
host and a peer would), ``handshake`` (openings checked against a nonce), ``records`` (records
of a real match mutated and re-signed, so the deep checks of the session are reached),
``transcript`` (transcript files mutated at the byte and record level, read and verified),
``datagram`` (LAN announcements), ``upnp6`` (a hostile IGDv2 router's SSDP, description and
SOAP answers to the IPv6 pinhole client) and ``live`` (a real ``dernier host`` process on
loopback); docs/FUZZING.md lists them all.
"""
