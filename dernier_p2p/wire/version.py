"""The protocol version this implementation speaks, and the message given for any other."""

from __future__ import annotations

PROTOCOL_VERSION = 2

# What changed from one version to the next, for the refusal message of an older one.
_RETIRED = {
    1: "version 1 transcripts and tables are from dernier_p2p 0.1 (before attested "
    "time-outs, fault records and the other version-2 messages); use that release to read them",
}


def version_mismatch(what: str, version: object) -> str:
    """A one-line explanation of why ``what`` (a transcript, a table, a peer) of ``version`` is
    refused."""
    line = f"{what} speaks protocol version {version!r}; this client speaks {PROTOCOL_VERSION}"
    if isinstance(version, int) and not isinstance(version, bool) and version in _RETIRED:
        line += f" ({_RETIRED[version]})"
    return line
