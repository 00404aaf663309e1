"""What a host's player sees when the router stops taking the renewals of its port mapping in
the middle of a match, and takes them again: the real ``dernier host`` behind the lab's UPnP
router (miniupnpd), in a 60-column pseudo-terminal, read as a person reads it, at the
full-screen table and in the line interface (``--plain``).

The mapping is asked for a 2 s lease (``--map-lease-seconds``), so it is renewed every second;
the router then refuses its home's connections (:meth:`.lab.Lab.refuse_upnp`) and later takes
them again. miniupnpc reports each refused connection with ``perror`` on standard error: none
of that may reach the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dernier_p2p.cli.internet import renewal_line
from tests.tui.terminal import Screen, Terminal
from tests.tui.test_terminal import SCROLLBAR, Table, table_of

from .lab import Lab

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PORT = 47634
JOIN_PORT = 47630  # a joining seat's candidate port: the default table port
COLS, ROWS = 60, 24


def _log_text(table: Table) -> str:
    """The log panel's rows as one text (a line wrapped over rows is whole again)."""
    return " ".join(row.strip().rstrip(SCROLLBAR).strip() for row in table.log.rows)


def _intact(screen: Screen, table: Table) -> None:
    """The table's panels are all drawn whole: its top border and the rows under it."""
    lines = screen.lines()
    assert lines[0].startswith("╭") and lines[0].rstrip().endswith("╮"), screen.text()
    assert table.players and table.hand.rows, screen.text()
    assert any("(you)" in row for box in table.players for row in box.rows), screen.text()


def _plain_rows(screen: Screen) -> list[str]:
    return [row.rstrip() for row in screen.text().splitlines() if row.strip()]


def _told_whole(rows: list[str], told: str) -> int:
    """The row where ``told`` starts in a --plain screen's ``rows``, checked whole on rows of
    its own and broken between words."""
    start = next(k for k, row in enumerate(rows) if row.startswith(told.split(":")[0]))
    assert all(len(row) < COLS for row in rows)  # broken between words
    assert told in " ".join(rows[start:])  # on rows of its own, whole
    return start


def _went_on_quietly(term: Terminal) -> None:
    """No word of miniupnpc's reached the terminal, and the table goes on."""
    raw = b"".join(term.raw)
    assert b"Connection refused" not in raw and b"connect:" not in raw  # miniupnpc's
    assert term.proc.poll() is None


def _renewed_at(lab: Lab, port: int) -> None:
    """The router mapped ``port`` and took it again, for the 2 s lease asked."""
    upnp_log = (lab.tmp / "miniupnpd-A.log").read_text()
    # (a renewal before the refusal depends on timing)
    assert upnp_log.count(f"AddPortMapping: ext port {port}") >= 2
    assert "leaseduration=2 " in upnp_log  # the lease --map-lease-seconds asked for


@pytest.mark.parametrize("ui", ["screen", "plain"])
def test_the_host_reads_the_renewals_stopping_and_coming_back_whole_at_60_columns(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path, ui: str
) -> None:
    lab = netlab({"A": True})
    router = lab.rtr["A"]
    where = f"{router.wan_ip}:{PORT}"
    stopped, again = (renewal_line(False, "port mapping", where),
                      renewal_line(True, "port mapping", where))
    env = {"PYTHONPATH": str(ROOT)}
    term = Terminal(tmp_path, COLS, ROWS, "host", "--players", "2", "--port", str(PORT),
                    "--no-announce", "--map-lease-seconds", "2", "--turn-seconds", "600",
                    "--key", str(tmp_path / "k0.pem"), "--transcript", str(tmp_path / "t0"),
                    *(["--plain"] if ui == "plain" else []),
                    prefix=lab.cmd(router.home_ns), env=env)
    try:
        term.wait_for(lambda s: "done (UPnP)" in s.text() or "done (UPnP)" in "".join(
            s.printed), "the router's mapping", limit=60)
        lab.spawn(lab.wan, tmp_path / "join.out", sys.executable, "-m", "dernier_p2p", "join",
                  where, "--bot", "--no-colour", "--key", str(tmp_path / "k1.pem"),
                  "--transcript", str(tmp_path / "t1"),
                  env=dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "d"),
                           **env))
        if ui == "screen":
            # its turn: the mark on its own row and a prompt open (to play a card, to name a
            # suit when a wild turned up, or only to draw when nothing fits)
            term.wait_for(lambda s: (t := table_of(s)) and any(
                "▶" in r and "(you)" in r for b in t.players for r in b.rows)
                and ">" in t.prompt, "the host's turn at the table", limit=60)
            lab.refuse_upnp("A")
            table = term.wait_for(lambda s: (t := table_of(s)) and stopped in _log_text(t)
                                  and t, "the renewals stopping, whole in the log")
            _intact(term.screen, table)
            lab.accept_upnp("A")
            table = term.wait_for(lambda s: (t := table_of(s)) and again in _log_text(t)
                                  and t, "the renewals back, whole in the log")
            _intact(term.screen, table)
            assert stopped in _log_text(table)  # both, one after the other
        else:
            prompt = term.wait_for(lambda s: (rows := _plain_rows(s)) and rows[-1].endswith(
                ">") and rows[-1], "the host's prompt", limit=60)
            for told, change in ((stopped, lab.refuse_upnp), (again, lab.accept_upnp)):
                change("A")
                rows = term.wait_for(lambda s, told=told: told in " ".join(
                    " ".join(s.printed).split()) and (rows := _plain_rows(s))[-1] == prompt
                    and rows, f"{told!r} then the prompt again")
                start = _told_whole(rows, told)
                assert rows[start - 1] == prompt  # the prompt's row was ended first ...
                assert rows[-1] == prompt  # ... and the prompt is open again
        _went_on_quietly(term)
    finally:
        term.close()
    _renewed_at(lab, PORT)


@pytest.mark.parametrize("ui", ["screen", "plain"])
def test_a_joiner_reads_its_own_renewals_stopping_and_coming_back_whole_at_60_columns(
    netlab: Callable[[dict[str, bool]], Lab], tmp_path: Path, ui: str
) -> None:
    """The same for a seat that joined by code from behind the UPnP router: it maps its
    candidate port (the table's) to host if the host goes away, renews it every second, and
    tells its player when the router stops taking the renewals and takes them again."""
    import re
    import time

    lab = netlab({"A": True})
    router = lab.rtr["A"]
    where = f"{router.wan_ip}:{JOIN_PORT}"  # (a seat joining by code listens at 47630)
    stopped, again = (renewal_line(False, "port mapping", where, seat=True),
                      renewal_line(True, "port mapping", where, seat=True))
    env = {"PYTHONPATH": str(ROOT)}
    out = tmp_path / "host.out"
    host = lab.spawn(lab.wan, out, sys.executable, "-m", "dernier_p2p", "host", "--players",
                     "2", "--port", str(PORT), "--no-announce", "--bot", "--no-colour",
                     "--advertise", lab.wan_ip, "--turn-seconds", "600",
                     "--key", str(tmp_path / "k0.pem"), "--transcript", str(tmp_path / "t0"),
                     env=dict(os.environ, HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "d"),
                              **env))
    deadline = time.monotonic() + 60
    while not (code := re.search(r"dernier join (dn1-[a-z2-7]+)", out.read_text())):
        assert time.monotonic() < deadline and host.poll() is None, out.read_text()
        time.sleep(0.05)
    term = Terminal(tmp_path, COLS, ROWS, "join", code.group(1), "--map-lease-seconds", "2",
                    "--key", str(tmp_path / "k1.pem"), "--transcript", str(tmp_path / "t1"),
                    *(["--plain"] if ui == "plain" else []),
                    prefix=lab.cmd(router.home_ns), env=env)
    try:
        if ui == "screen":
            term.wait_for(lambda s: (t := table_of(s)) and "(you)" in " ".join(
                r for b in t.players for r in b.rows), "the joiner's table", limit=90)
            for told, change in ((stopped, lab.refuse_upnp), (again, lab.accept_upnp)):
                change("A")
                table = term.wait_for(lambda s, told=told: (t := table_of(s))
                                      and told in _log_text(t) and t, f"{told!r} in the log")
                _intact(term.screen, table)
        else:
            prompt = term.wait_for(lambda s: (rows := _plain_rows(s)) and rows[-1].endswith(
                ">") and rows[-1], "the joiner's prompt", limit=90)
            for told, change in ((stopped, lab.refuse_upnp), (again, lab.accept_upnp)):
                change("A")
                rows = term.wait_for(lambda s, told=told: told in " ".join(
                    " ".join(s.printed).split()) and (rows := _plain_rows(s))[-1].endswith(">")
                    and rows, f"{told!r} then a prompt again")
                _told_whole(rows, told)
            assert prompt  # (a prompt was open before the first)
        _went_on_quietly(term)
    finally:
        term.close()
    _renewed_at(lab, JOIN_PORT)
