"""The protocol versions (PROTOCOL.md 20): version 4 is spoken live, versions 2 to 4 verify, and
a refusal names the version met and the versions taken."""

from __future__ import annotations

from dernier_p2p.wire.version import (
    PROTOCOL_VERSION,
    READABLE_VERSIONS,
    describe,
    version_mismatch,
)


def test_version_4_is_spoken_and_versions_2_to_4_are_read() -> None:
    assert PROTOCOL_VERSION == 4
    assert READABLE_VERSIONS == (2, 3, 4)


def test_a_version_3_peer_is_refused_naming_both_versions() -> None:
    """A live table runs version 4 alone: a version-3 peer reads three rules otherwise."""
    assert version_mismatch("this player", 3) == (
        "this player speaks protocol version 3; this client speaks 4: every player at a table "
        "needs a release that speaks the same version: compare `dernier --version` on both "
        "machines and install the same release")


def test_a_verifier_names_every_version_it_reads() -> None:
    line = version_mismatch("this transcript", 5, READABLE_VERSIONS)
    assert line == ("this transcript speaks protocol version 5; this client speaks 4 and "
                    "verifies versions 2, 3 and 4: verify it with a release that speaks "
                    "version 5")
    assert "dernier_p2p 0.1" in version_mismatch("this transcript", 1, READABLE_VERSIONS)


def test_the_version_line() -> None:
    assert describe("1.0", "compiled", "C").startswith(
        "dernier 1.0: protocol version 4 (verifies transcripts of versions 2, 3 and 4); ")
