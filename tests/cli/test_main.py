"""The ``dernier`` command line: what ``--version`` says, a pasted invite code, the relay's
banner."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dernier_p2p import __version__
from dernier_p2p.cli.main import main
from dernier_p2p.deck.group import PATH
from dernier_p2p.rules import BUILD


def test_version_names_the_release_the_protocol_the_transcripts_read_engine_and_group() -> None:
    out = CliRunner().invoke(main, ["--version"])
    assert out.exit_code == 0
    assert out.output == (
        f"dernier {__version__}: protocol version 5 (verifies transcripts of versions 2, 3, 4 "
        f"and 5); "
        f"rules engine {BUILD}; group arithmetic {PATH}\n"
    )


def _code() -> str:
    """A code with a relay route (the longest kind), every route at a closed loopback port."""
    from dernier_p2p.net.invite import Invite, Route

    routes = (Route("direct", "127.0.0.1", 1), Route("mapped", "127.0.0.2", 1),
              Route("relay", "127.0.0.3", 1, bytes(range(8))))
    return Invite(bytes(range(10)), routes).encode()


def test_a_pasted_code_is_made_whole() -> None:
    """What a terminal copy brings: the panel's borders and line breaks, the whole printed
    line with ``dernier join``, a code in pieces; an address stays as it is."""
    from dernier_p2p.cli.main import _invite_dialer, pasted_target

    code = _code()
    assert len(code) > 76  # a relay route: longer than the log's line at 80 columns
    cut = 40
    panel = f"│   dernier join {code[:cut]}│\n│{code[cut:]}         │"
    scrolled = f"│ dernier join {code[:cut]} ▂▂ │\n│ {code[cut:]}    ▆▆ │"  # a log's scrollbar
    for text in (code, f"dernier join {code}", panel, scrolled, f"  {code[:cut]} {code[cut:]}  ",
                 f"Dernier Join {code.upper()}", f"join {code}"):
        assert pasted_target(text).lower() == code, text
        assert _invite_dialer(pasted_target(text)).invite.encode() == code
    assert pasted_target("dernier join 10.0.0.5:47630") == "10.0.0.5:47630"
    assert pasted_target("│ [::1]:47630 │") == "[::1]:47630"
    assert pasted_target("  │ ") == ""


def test_join_with_a_whole_pasted_line_in_pieces_reads_the_code(tmp_path) -> None:
    """``dernier join dernier join dn1-…`` (the printed line pasted after the typed command),
    with the code cut by a space: the code is read, not refused as HOST:PORT (the connection
    to its closed loopback ports then fails, as no table is there)."""
    code = _code()
    out = CliRunner().invoke(main, ["join", "dernier", "join", code[:30], code[30:], "--bot",
                                    "--key", str(tmp_path / "k.pem"), "--transcript",
                                    str(tmp_path / "t"), "--no-listen"])
    assert "is not HOST:PORT" not in out.output
    assert "Invite for the host with key fingerprint 0001-0203-0405-0607-0809" in out.output


def test_the_prompt_takes_a_code_pasted_over_several_lines(monkeypatch) -> None:
    import io

    from dernier_p2p.cli.main import _ask_target

    code = _code()
    monkeypatch.setattr("sys.stdin", io.StringIO(f"│ {code[:50]}│\n│{code[50:]} │\n"))
    assert _ask_target() == code  # whole after its second line: no empty line needed
    monkeypatch.setattr("sys.stdin", io.StringIO("10.0.0.5:47630\n"))
    assert _ask_target() == "10.0.0.5:47630"
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{code[:50]}\n\n"))
    assert _ask_target() == code[:50]  # an empty line ends it: the code is then refused


def test_the_relay_names_the_address_hosts_give() -> None:
    from dernier_p2p.cli.main import relay_banner

    assert relay_banner("0.0.0.0", 47640, "93.184.216.34") == (
        "Relay listening on 0.0.0.0:47640. Hosts use: dernier host --relay 93.184.216.34:47640")
    assert relay_banner("93.184.216.9", 5, "10.0.0.2").endswith("--relay 93.184.216.9:5")
    lan = relay_banner("0.0.0.0", 47640, "192.168.1.4")
    assert lan.startswith("Relay listening on 0.0.0.0:47640. Hosts use: dernier host --relay "
                          "192.168.1.4:47640 (192.168.1.4 is an address on this network")
    assert "port 47640 forwarded" in lan
    assert relay_banner("::", 7, "::1").endswith(
        "--relay [::1]:7 (a loopback address: only players on this machine reach it)")
    assert "THIS-MACHINE" not in relay_banner("0.0.0.0", 1, "127.0.0.1")


@pytest.mark.parametrize("command", ["host", "join"])
def test_the_mapping_lease_is_portmaps_and_a_lease_under_two_seconds_is_refused(
    command: str,
) -> None:
    from dernier_p2p.net.portmap import LEASE_S, MAX_LEASE_S

    option = next(p for p in main.commands[command].params if p.name == "map_lease")
    assert option.default == LEASE_S
    assert (option.type.min, option.type.max) == (2, MAX_LEASE_S)  # renewed at >= 1 s
    out = CliRunner().invoke(main, [command, "--map-lease-seconds", "1"])
    assert out.exit_code == 2 and "--map-lease-seconds" in out.output, out.output
