"""The protocol versions (PROTOCOL.md 20): version 5 is spoken live, versions 2 to 5 verify, and
a refusal names the version met and the versions taken."""

from __future__ import annotations

from dernier_p2p.wire.version import (
    PROTOCOL_VERSION,
    READABLE_VERSIONS,
    describe,
    version_mismatch,
)


def test_version_5_is_spoken_and_versions_2_to_5_are_read() -> None:
    assert PROTOCOL_VERSION == 5
    assert READABLE_VERSIONS == (2, 3, 4, 5)


def test_a_version_4_peer_is_refused_naming_both_versions() -> None:
    """A live table runs version 5 alone: a version-4 peer or relay does not know the punch
    fields of the relay frames (PROTOCOL.md Appendix E)."""
    assert version_mismatch("this player", 4) == (
        "this player speaks protocol version 4; this client speaks 5: every player at a table "
        "needs a release that speaks the same version: compare `dernier --version` on both "
        "machines and install the same release")


def test_a_verifier_names_every_version_it_reads() -> None:
    line = version_mismatch("this transcript", 6, READABLE_VERSIONS)
    assert line == ("this transcript speaks protocol version 6; this client speaks 5 and "
                    "verifies versions 2, 3, 4 and 5: verify it with a release that speaks "
                    "version 6")
    assert "dernier_p2p 0.1" in version_mismatch("this transcript", 1, READABLE_VERSIONS)


def test_the_version_line() -> None:
    assert describe("1.0", "compiled", "C").startswith(
        "dernier 1.0: protocol version 5 (verifies transcripts of versions 2, 3, 4 and 5); ")
