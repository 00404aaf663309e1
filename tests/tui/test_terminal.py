"""The real program in a pseudo-terminal, read as a person reads its screen: ``dernier play``
through a whole hand at 60x20, 80x24 and 200x50 (the log keeps its rows, with the moves in it;
the offer box when a chance comes; the prompt; no hour-long clock), its line interface at 60
columns (a prompt broken between phrases), and ``dernier host`` at a terminal (the turn clock
on its player's line, the invite code copied by a key and readable in pieces, the full-screen
table again after the host's process is killed and run again)."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dernier_p2p.cli.main import pasted_target
from dernier_p2p.net.invite import decode
from tests.cli.helpers import spawn
from tests.tui.terminal import Box, Screen, Terminal, boxes

SEED = "11"  # a short hand in which the player gets down to one card (a late declaration)
MIN_LOG = 5
PHRASES = ("card number to play (add ! to declare)", "d = draw", "p = pass", "q = leave",
           "! = declare DERNIER/SOLO", "Enter = next hand", "Enter lets it go")


@dataclass
class Table:
    """The panels of one screen of the full-screen table."""

    players: list[Box]
    log: Box
    hand: Box
    offers: Box | None
    below: list[str]  # the rows under the last panel: the prompt, the keys

    @property
    def prompt(self) -> str:
        return " ".join(row.strip() for row in self.below)


def table_of(screen: Screen) -> Table | None:
    """The table on ``screen``, or None while it is not drawn: the hand's panel, the log's
    (the full-width panel above it that is not the players'; its rows are 0 when there is
    none), the players' panels above, the out-of-turn offer's, the rows under them all."""
    if screen.alt is None:
        return None
    lines = screen.lines()
    found = boxes(lines)
    hand = next((b for b in found if "Your hand" in b.title + b.text()), None)
    if hand is None:
        return None
    wide = [b for b in found if b.top < hand.top and b.left == 0 and b.right == screen.cols - 1
            and "(you)" not in b.text()]
    log = max(wide, key=lambda b: b.top) if wide else Box("", "", hand.top, 0, 0, [])
    offers = next((b for b in found if "Out of turn" in b.title or "let it go" in b.text()),
                  None)
    players = [b for b in found if b.top < log.top]
    last = max(b.top + len(b.rows) + 1 for b in found)
    return Table(players, log, hand, offers, [row for row in lines[last + 1 :] if row.strip()])


@dataclass
class Seen:
    """What the test saw of a whole hand."""

    frames: int = 0
    log_rows: list[int] = field(default_factory=list)
    moves: set[str] = field(default_factory=set)
    offers: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    clocks: list[str] = field(default_factory=list)


def _check(table: Table, seen: Seen) -> None:
    """What must hold on every screen: the log's rows and how to scroll it, the player's own
    line whole, a prompt's phrases whole."""
    seen.frames += 1
    seen.log_rows.append(len(table.log.rows))
    assert len(table.log.rows) >= MIN_LOG, table
    assert "PgUp/PgDn scroll" in table.log.title  # how to see what has scrolled away
    for row in table.log.rows:
        seen.moves.update(re.findall(r"(?:Player|Bot 1) (?:plays|draws)", row))
    if any("Waiting for the table to fill" in box.text() for box in table.players):
        return  # the deal has not come yet
    names = [row for box in table.players for row in box.rows if "(you)" in row]
    assert len(names) == 1, table.players  # own line, whole
    seen.clocks.extend(row for box in table.players for row in box.rows if "⏱" in row)
    for phrase in PHRASES:  # a prompt over several rows breaks between its phrases
        if phrase in table.prompt:
            assert any(phrase in row for row in table.below), table.below


def _act(table: Table, seen: Seen) -> str | None:
    """The key a person presses now, or None: a playable card (never declaring with it, so
    that the late declaration is offered), else draw or pass; a suit; Enter to go on."""
    prompt = table.prompt
    if table.offers is not None:
        offer = table.offers.text()
        seen.offers.append(offer)
        return "!\r" if "[!]+Enter declare" in offer else "\r"
    if "The hand is over" in prompt:
        return "\r"
    if "Name a suit" in prompt:
        return re.search(r"\b([yrgb]) [A-Z]", prompt).group(1)  # type: ignore[union-attr]
    if "q = leave" not in prompt:
        return None
    seen.prompts.append(prompt)
    playable = re.findall(r"\[(\w)\][^\[▲]*▲", table.hand.text())
    if playable:
        return playable[0]
    if "d = draw" in prompt or "d = take" in prompt:
        return "d"
    return "p" if "p = pass" in prompt else None


@pytest.mark.parametrize("cols,rows", [(60, 20), (80, 24), (200, 50)])
def test_a_whole_hand_reads_whole_at_each_size(tmp_path: Path, cols: int, rows: int) -> None:
    """``dernier play``, two seats, one hand, played by keys read off the screen: on every
    screen the log has five rows or more and the player's own line is whole; the moves show in
    the log, the late declaration's box comes (the player never declares with the card), the
    prompts break between phrases, and no clock counts down an hour against the bots."""
    term = Terminal(tmp_path, cols, rows, "play", "--players", "2", "--hands", "1", "--seed",
                    SEED, "--transcript", str(tmp_path / "t"))
    seen = Seen()
    try:
        deadline = time.monotonic() + 120
        pressed_on, pressed_at = "", 0.0
        while not term.closed and time.monotonic() < deadline:
            term.settle()
            table = table_of(term.screen)
            if table is None:
                continue
            _check(table, seen)
            key = _act(table, seen)
            screen = term.screen.text()
            if key is None or (screen == pressed_on and time.monotonic() - pressed_at < 2.0):
                continue  # nothing to do, or the key pressed has not shown yet
            term.send(key)
            pressed_on, pressed_at = screen, time.monotonic()
        assert term.closed, term.screen.text()
        assert term.proc.wait(timeout=30) == 0
    finally:
        term.close()
    printed = "".join(term.screen.printed)
    assert "Final scores: Player" in printed, printed
    assert seen.moves >= {"Player plays", "Bot 1 plays"}, seen.moves
    assert seen.frames >= 5 and min(seen.log_rows) >= MIN_LOG
    assert any("[!]+Enter declare DERNIER! ⏱" in offer for offer in seen.offers), seen.offers
    assert seen.prompts and all("card number to play" in p or "d = " in p for p in seen.prompts)
    assert not seen.clocks, seen.clocks  # an hour against the bots: no clock to watch


def test_the_line_interface_breaks_a_prompt_between_phrases_at_60_columns(
    tmp_path: Path,
) -> None:
    """``dernier play --plain`` at a 60-column terminal: the prompt, longer than a row, comes
    in rows broken between its phrases, not where the terminal would cut a word."""
    term = Terminal(tmp_path, 60, 20, "play", "--plain", "--players", "2", "--hands", "1",
                    "--seed", SEED, "--transcript", str(tmp_path / "t"))
    try:
        term.wait_for(lambda s: "card number to play" in s.text(), "the prompt")
        term.settle(0.5, 3)
        rows = term.screen.text().splitlines()
        start = max(k for k, row in enumerate(rows) if row.startswith("card number"))
        end = next(k for k in range(start, len(rows)) if ">" in rows[k])
        prompt = rows[start : end + 1]
        assert len(prompt) > 1, rows  # longer than a row ...
        for phrase in ("card number to play (add ! to declare)", "d = draw", "q = leave"):
            assert any(phrase in row for row in prompt), prompt  # ... broken between phrases
        assert all(row.endswith(" ·") for row in prompt[:-1]), prompt
    finally:
        term.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SCROLLBAR = " ▁▂▃▄▅▆▇█"


def _code_rows(screen: Screen, table: Table) -> tuple[list[str], list[str]]:
    """The log's rows from the ``dernier join`` line to the last row of its code: the code's
    pieces, and the screen's whole rows (borders, scrollbar and all) as a terminal copies
    them."""
    rows = [row.strip().rstrip(SCROLLBAR) for row in table.log.rows]
    start = next(k for k, row in enumerate(rows) if row.startswith("dernier join"))
    end = start + 1
    while end < len(rows) and re.fullmatch(r"(dn1-)?[a-z2-7]+", rows[end]):
        end += 1
    top = table.log.top + 1
    return rows[start:end], screen.lines()[top + start : top + end]


def test_a_hosted_table_at_a_terminal_clock_code_and_the_host_back_after_a_crash(
    tmp_path: Path,
) -> None:
    """``dernier host --relay`` at 60x20: the invite code (long with a relay, so folded in the
    log) is copied whole by Ctrl+Y, and its folded rows, copied as a person copies them, join
    to the same code; the turn clock stands on its player's line; the host's process killed
    and its command run again comes back at the full-screen table."""
    port, relay_port, listen = _free_port(), _free_port(), _free_port()
    relay = spawn(tmp_path, tmp_path / "relay.out", "relay", "--port", str(relay_port),
                  "--bind", "127.0.0.1")
    host_args = ["host", "--players", "3", "--hands", "1", "--bind", "127.0.0.1", "--port",
                 str(port), "--no-announce", "--no-map", "--relay", f"127.0.0.1:{relay_port}",
                 "--key", str(tmp_path / "k0.pem"), "--transcript", str(tmp_path / "t0"),
                 "--name", "Player", "--grace-seconds", "60"]
    procs: list[subprocess.Popen[bytes]] = [relay]
    terms: list[Terminal] = []
    try:
        deadline = time.monotonic() + 30
        while "Relay listening" not in (tmp_path / "relay.out").read_text(errors="replace"):
            assert time.monotonic() < deadline and relay.poll() is None
            time.sleep(0.05)
        host = Terminal(tmp_path, 60, 20, *host_args)
        terms.append(host)
        table = host.wait_for(lambda s: (t := table_of(s)) and any(
            "dn1-" in row for row in t.log.rows) and t, "the invite code in the log")
        pieces, copied_rows = _code_rows(host.screen, table)
        host.send("\x19")  # Ctrl+Y
        copied = host.wait_for(lambda s: s.clipboard and s.clipboard[-1], "the copy (OSC 52)")
        assert copied.startswith("dernier join dn1-")
        code = copied.split()[-1]
        decode(code)
        assert len(pieces) > 1, pieces  # the code is folded at 60 columns ...
        assert pasted_target(" ".join(pieces)) == code  # ... and its pieces join
        assert pasted_target("\n".join(copied_rows)) == code  # as the terminal copies them
        assert "Ctrl+Y copies it" in table.log.text()
        for k, extra in ((1, ["--listen", f"127.0.0.1:{listen}"]), (2, ["--no-listen"])):
            procs.append(spawn(tmp_path, tmp_path / f"p{k}.out", "join", code, "--name",
                               f"P{k}", "--key", str(tmp_path / f"k{k}.pem"), "--transcript",
                               str(tmp_path / f"t{k}"), "--bot", "--no-colour", *extra))
        clocked = host.wait_for(
            lambda s: (t := table_of(s)) and next(
                (row for b in t.players for row in b.rows if "(you)" in row and "⏱" in row),
                None), "the host's clock on its line", limit=120)
        assert re.search(r"Player \(you\) · \d+ cards? · \d+ pts?  ⏱ \d:\d\d", clocked)
        host.proc.kill()  # the host's process dies at its turn
        host.close()
        again = Terminal(tmp_path, 60, 20, *host_args)
        terms.append(again)
        back = again.wait_for(lambda s: (t := table_of(s)) and "Back at seat 0" in t.log.text()
                              and t, "the full-screen table after the restart", limit=120)
        assert back.hand is not None and back.players
        assert "Restarting from" in "".join(again.screen.printed)
        for row in back.below:
            assert len(row.rstrip()) <= 60
    finally:
        for term in terms:
            term.close()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def test_the_verbose_log_goes_to_a_file_while_the_full_screen_table_runs(
    tmp_path: Path,
) -> None:
    """``dernier -v host`` at 80x24 with a bot joining: the network's notices go to
    ``verbose.log`` in the data folder, not over the table (before, each INFO line was
    written across the panels), and the terminal is told where they went once the table
    ends (here by the player leaving: Ctrl+C twice)."""
    port = _free_port()
    host = Terminal(tmp_path, 80, 24, "-v", "host", "--players", "2", "--hands", "1", "--bind",
                    "127.0.0.1", "--port", str(port), "--no-announce", "--no-map",
                    "--key", str(tmp_path / "k0.pem"), "--transcript", str(tmp_path / "t0"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        host.wait_for(lambda s: table_of(s) is not None, "the full-screen table")
        since = len(host.raw)  # (what -v logged before the table is the terminal's)
        procs.append(spawn(tmp_path, tmp_path / "p1.out", "join", f"127.0.0.1:{port}", "--name",
                           "P1", "--key", str(tmp_path / "k1.pem"), "--transcript",
                           str(tmp_path / "t1"), "--bot", "--no-colour"))
        seen = host.wait_for(lambda s: (t := table_of(s)) and t.hand is not None and t,
                             "the hand dealt", limit=120)
        assert seen.players and "INFO" not in host.screen.text(), host.screen.text()
        host.send("\x03")
        host.read(1.0)
        host.send("\x03")
        deadline = time.monotonic() + 60
        while not host.closed and time.monotonic() < deadline:
            host.read(0.2)
            assert "INFO dernier_p2p" not in host.screen.text(), host.screen.text()
        assert host.closed
    finally:
        host.close()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    written = b"".join(host.raw[since:]).decode("utf-8", "replace")
    assert "INFO dernier_p2p" not in written, written[-3000:]
    log = tmp_path / "data" / "dernier" / "verbose.log"
    assert "INFO dernier_p2p.net" in log.read_text(), log.read_text()
    assert f"The -v log of this table is in {log}" in " ".join(
        "".join(host.screen.printed).split()), host.screen.printed[-10:]
