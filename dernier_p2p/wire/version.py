"""The protocol version this implementation speaks, the versions whose transcripts it still
verifies, and the message given for any other."""

from __future__ import annotations

PROTOCOL_VERSION = 5

# Versions whose transcripts (header byte, record 0's table) a verifier accepts: version 3
# changed frames and liveness rules only, never what a record may hold; version 4 changed three
# rules (and added the table option leave), and transcripts of versions 2 and 3 are read with
# the earlier readings; version 5 changed relay frames only, so its transcripts read as version
# 4's (PROTOCOL.md 20). A live table (handshake, record 0) runs PROTOCOL_VERSION alone.
READABLE_VERSIONS = (2, 3, 4, 5)

# What changed from one version to the next, for the refusal message of an older one.
_RETIRED = {
    1: "version 1 transcripts and tables are from dernier_p2p 0.1 (before attested "
    "time-outs, fault records and the other version-2 messages); use that release to read them",
}


def _versions(versions: tuple[int, ...]) -> str:
    *rest, last = (str(v) for v in versions)
    return f"{', '.join(rest)} and {last}" if rest else last


def version_mismatch(
    what: str, version: object, accepted: tuple[int, ...] = (PROTOCOL_VERSION,)
) -> str:
    """A one-line explanation of why ``what`` (a transcript, a table, a peer) of ``version`` is
    refused: the version met, the version(s) this client takes (``accepted``: the live version
    by default, :data:`READABLE_VERSIONS` when verifying) and what to do."""
    line = f"{what} speaks protocol version {version!r}; "
    if tuple(accepted) == (PROTOCOL_VERSION,):
        line += f"this client speaks {PROTOCOL_VERSION}"
        advice = ("every player at a table needs a release that speaks the same version: "
                  "compare `dernier --version` on both machines and install the same release")
    else:
        line += (f"this client speaks {PROTOCOL_VERSION} and verifies versions "
                 f"{_versions(tuple(accepted))}")
        advice = f"verify it with a release that speaks version {version!r}"
    if isinstance(version, int) and not isinstance(version, bool) and version in _RETIRED:
        return f"{line} ({_RETIRED[version]})"
    return f"{line}: {advice}"


def describe(program: str, engine: str, group: str) -> str:
    """The ``dernier --version`` line: the release ``program``, the protocol it speaks, the
    transcript versions it verifies, which build of the rules ``engine`` runs and which
    ``group`` arithmetic the deck runs on."""
    return (f"dernier {program}: protocol version {PROTOCOL_VERSION} (verifies transcripts of "
            f"versions {_versions(READABLE_VERSIONS)}); rules engine {engine}; "
            f"group arithmetic {group}")
