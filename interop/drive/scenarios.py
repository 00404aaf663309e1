"""The live scenarios, one :class:`~interop.drive.model.Scenario` each (the vocabulary is in
:mod:`interop.drive.model`). Each names the PROTOCOL.md section whose behaviour it checks.

Timers are short (a 4 s turn, a 2 s grace) so that a scenario takes seconds; the client takes
them from the table record. The protocol's constants are not the table's: a scenario that waits
on ``censor_ms`` (10 s) or ``SILENCE_MS`` (15 s) takes that long.
"""

from __future__ import annotations

from interop.drive.model import Expect, Fault, Forbid, Scenario, Seat

BOT = Seat("bot")
IDLE = Seat("idle", listen=False)
IDLE_LINKED = Seat("idle")
DEAF = Seat("deaf")
THREE = ("host", "a", "client")
FOUR = ("host", "a", "b", "client")

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "join", "4.2, 7.1",
        "the client opens with a signed hello giving a listen address and accepts the table",
        expect=(
            Expect("hello", {"listen": True},
                   "a hello the host admits, with a listen address (so it can be a candidate)"),
            Expect("record", {"author": "@client", "type": "accept"},
                   "an accept of record 0 (its hash) as its first envelope"),
        ),
    ),
    Scenario(
        "done", "4.3, 7.8",
        "the client plays the hand to its end and says done naming the host's last record",
        expect=(
            Expect("record", {"author": "@client", "type": "move"}, "a move of its own"),
            Expect("done", {"last_ok": True},
                   "a done frame whose last is the host's last record once the match is over"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "beat", "4.3",
        "with nothing to send for BEAT_MS the client sends beat frames to its host",
        host="idle", turn_ms=30_000,
        expect=(Expect("beat", {}, "a beat frame when it has sent nothing for 2 s"),),
    ),
    Scenario(
        "ready", "18.1",
        "the client sends signed ready frames naming a record it holds",
        expect=(Expect("ready", {"sig_ok": True, "at_ok": True},
                       "a ready frame, signed by its seat, whose at is a record it holds"),),
    ),
    Scenario(
        "offer-window", "18.1",
        "a client to act waits declare_ms when the other seats send no ready",
        declare_ms=2_000, faults=(Fault("no-ready"),),
        expect=(
            Expect("env", {"turn": True, "waited": True},
                   "its turn move held for declare_ms after the other seat's move"),
            Expect("env", {"turn": True, "waited": True},
                   "its next turn move held for declare_ms too"),
        ),
        forbid=(Forbid("env", {"turn": True, "waited": False},
                       "it moved before declare_ms with no ready from the other seat"),),
        deadline=90.0,
    ),
    Scenario(
        "version", "20, 4.2",
        "the client refuses a challenge of another protocol version and ends with a message",
        host="raw", version=4,
        expect=(
            Expect("opening", {"kind": "refused"},
                   "no hello to a host of version 4: an error VERSION frame or a close"),
            Expect("exit", {"nonzero": True, "traceback": False},
                   "the process ends with a non-zero status and a message, not a traceback"),
        ),
        deadline=30.0,
    ),
    Scenario(
        "probe", "4.6",
        "the client answers a probe over a link with a signed present",
        host="idle", turn_ms=30_000,
        faults=(Fault("probe", cue="play", arg=1),),
        expect=(Expect("present", {"ok": True, "have_ok": True},
                       "a present signed by its seat, have its last record"),),
    ),
    Scenario(
        "probe-pace", "4.6",
        "the client answers one seat's probes at most once a second over all its links",
        host="idle", turn_ms=30_000,
        faults=(Fault("probe", cue="play", arg=2),),
        expect=(
            Expect("present", {"ok": True}, "a present to the first of two probes"),
            Expect("present", {"ok": True},
                   "the second present a second or more after the first", gap=0.8),
        ),
    ),
    Scenario(
        "link-signature", "4.6",
        "the client refuses a link whose signature is not the seat's",
        host="idle", turn_ms=30_000,
        faults=(Fault("bad-link", cue="play"),),
        expect=(Expect("link", {"refused": True},
                       "an error BAD_SIGNATURE (or a close) for a bad link, no present"),),
    ),
    Scenario(
        "timeout", "7.5.5 timeout, 18",
        "another seat's turn time runs out (it has no address to probe): the client votes",
        seats=THREE, others={"a": IDLE},
        expect=(Expect("vote", {"kind": "timeout", "target": "@a", "sig_ok": True,
                                "fresh": True},
                       "a timeout vote about the seat whose time ran out, signed and fresh"),),
    ),
    Scenario(
        "probe-then-timeout", "7.5.5 probe, timeout",
        "at the limit the client probes the awaited seat, which shows nothing, then votes",
        seats=THREE, others={"a": IDLE_LINKED},
        expect=(
            Expect("probed", {}, "a probe of the awaited seat at its limit", where="a"),
            Expect("vote", {"kind": "timeout", "target": "@a", "sig_ok": True,
                            "fresh": True}, "a timeout vote once the probe showed nothing"),
        ),
    ),
    Scenario(
        "host-seat-timeout", "7.5.4, 7.5.5",
        "the host's own seat runs out of time: the client votes timeout about it",
        seats=THREE, host="idle", others={"a": BOT},
        expect=(Expect("vote", {"kind": "timeout", "target": 0, "sig_ok": True,
                                "fresh": True},
                       "a timeout vote about the host's own seat"),),
    ),
    Scenario(
        "revote", "7.5.5 votes go again",
        "a host that dropped a vote gets the same vote frame again revote_ms later",
        seats=THREE, others={"a": IDLE}, faults=(Fault("withhold-votes"),),
        expect=(
            Expect("vote", {"kind": "timeout", "target": "@a"}, "a timeout vote"),
            Expect("vote", {"same": True}, "the same vote frame again about 2 s later",
                   gap=1.5),
        ),
    ),
    Scenario(
        "pass-on", "4.6, 7.5.5 pass-on",
        "a probe shows an envelope the host never got: the client passes it on, no timeout",
        seats=THREE, others={"a": BOT}, faults=(Fault("hold", cue="turn:a", role="a"),),
        expect=(Expect("pass", {"author": "@a"},
                       "a pass frame carrying the awaited seat's shown envelope"),),
        forbid=(Forbid("vote", {"kind": "timeout", "target": "@a"},
                       "a timeout vote about a seat whose envelope a probe showed",
                       until=0),),
    ),
    Scenario(
        "lend", "7.5.5 lend, 4.6",
        "a host mutes the awaited seat: the client's probe sees it short and lends it records",
        seats=THREE, others={"a": BOT}, faults=(Fault("mute", cue="play", role="a"),),
        expect=(Expect("lend", {}, "records lent over a link to the seat the host muted",
                       where="a"),),
        forbid=(Forbid("vote", {"kind": "timeout", "target": "@a"},
                       "a timeout vote about a seat that did not have the record",
                       until=0),),
    ),
    Scenario(
        "left", "7.5.5 left, 4.4",
        "a seat drops and does not come back: after its grace the client votes left",
        seats=THREE, others={"a": BOT}, faults=(Fault("kill", cue="play", role="a"),),
        expect=(Expect("vote", {"kind": "left", "target": "@a", "sig_ok": True,
                                "fresh": True},
                       "a left vote about the dropped seat once its grace ran out"),),
        forbid=(Forbid("vote", {"kind": "timeout", "target": "@a"},
                       "a timeout vote about a seat reported dropped"),),
    ),
    Scenario(
        "censoring-host", "7.5.5 censored, 7.6",
        "the host passes over the client's envelopes: the client deposes it at a candidate",
        seats=THREE, others={"a": BOT},
        faults=(Fault("censor", cue="turn:client", role="client"),),
        expect=(Expect("urge", {"kind": "depose", "target": 0, "sig_ok": True},
                       "a depose vote sent over a link to the first candidate, censor_ms "
                       "after its envelope was passed over", where="a"),),
        deadline=60.0,
    ),
    Scenario(
        "host-killed", "7.5.5 gone, 7.6",
        "the host is killed: the client votes depose, resumes with the new host, plays on",
        seats=FOUR, others={"a": BOT, "b": BOT}, faults=(Fault("kill", cue="play"),),
        expect=(
            Expect("urge", {"kind": "depose", "target": 0, "sig_ok": True},
                   "a depose vote over a link to the first candidate", where="a"),
            Expect("resume", {"where": "a"},
                   "a resume with the candidate that took over"),
            Expect("record", {"author": "@client", "after_change": True},
                   "an envelope of its own sequenced by the new host"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "candidates-in-order", "7.6 failover",
        "the first candidate never takes over: the client urges it, then the next, "
        "and resumes with the one that hosts",
        seats=FOUR, others={"a": DEAF, "b": BOT}, faults=(Fault("kill", cue="play"),),
        expect=(
            Expect("urge", {"kind": "depose", "target": 0}, "an urge of the first candidate",
                   where="a"),
            Expect("urge", {"kind": "depose", "target": 0},
                   "then an urge of the second candidate", where="b"),
            Expect("resume", {"where": "b"}, "a resume with the second candidate"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "client-takes-over", "7.6 take-over, gather",
        "the host is killed and the client is the first candidate: it takes over, sequences "
        "the host_change and hosts the others",
        seats=("host", "client", "a", "b"), others={"a": BOT, "b": BOT},
        faults=(Fault("kill", cue="play"),),
        expect=(
            Expect("record", {"author": "@client", "type": "host_change"},
                   "its host_change once the others urged it (a quorum with its own vote)"),
            Expect("record", {"author": "@a", "after_change": True},
                   "an envelope of another seat sequenced by it as the new host"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "two-seats", "7.6 two-seats",
        "at two seats the host vanishes: the client ends the match for itself after "
        "2 * grace_ms, neither sooner nor never",
        faults=(Fault("kill", cue="play"),),
        expect=(
            Expect("killed", {}, "(the host is killed)", where="host"),
            Expect("exit", {"traceback": False},
                   "its end of the match (the process ends, with no traceback) no sooner "
                   "than 2 * grace_ms after its host vanished", gap=3.5),
        ),
        forbid=(Forbid("exit", {}, "ending before 2 * grace_ms with no host", since=0,
                       until=1),),
        deadline=40.0,
    ),
    Scenario(
        "resume", "4.4",
        "the host closes the client's connection: it resumes and plays on",
        faults=(Fault("drop", cue="play"),),
        expect=(
            Expect("resume", {"where": "host", "have_ok": True},
                   "a signed resume whose have is a record it holds"),
            Expect("env", {"type": "move"}, "a move of its own over the resumed connection"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "silent-host", "4.3",
        "the host's connection brings nothing (not even beats): the client resumes",
        turn_ms=60_000,
        faults=(Fault("silent", cue="play"),),
        expect=(Expect("resume", {"where": "host"},
                       "a resume once nothing came for SILENCE_MS (15 s)"),),
        deadline=60.0,
    ),
    Scenario(
        "chat-limit", "7.10",
        "a chat line at the limits (200 characters, 400 bytes) is applied like any record",
        faults=(Fault("chat", cue="play", arg="\u00e9" * 200),),
        expect=(Expect("record", {"author": "@client", "after_chat": True},
                       "an envelope of its own after the chat record"),),
        forbid=(Forbid("error", {}, "an error frame for a valid chat"),),
        deadline=90.0,
    ),
    Scenario(
        "chat-over-limit", "7.10, 5.3",
        "a chat record past the limits (201 characters) is refused MALFORMED",
        faults=(Fault("forge-chat", cue="play", arg="\u00e9" * 201),),
        expect=(Expect("error", {"code": "MALFORMED"},
                       "an error MALFORMED for the chat record, naming the host"),),
        forbid=(Forbid("env", {}, "an envelope after refusing a record (it must stop)",
                       since=0),),
        settle=2.0,
    ),
    Scenario(
        "bad-record", "5.3, 4.3",
        "a record whose host signature is wrong is refused BAD_SIGNATURE and the client stops",
        faults=(Fault("corrupt", cue="play"),),
        expect=(Expect("error", {"code": "BAD_SIGNATURE"},
                       "an error BAD_SIGNATURE for the record"),),
        forbid=(Forbid("env", {}, "an envelope after refusing a record (it must stop)",
                       since=0),),
        settle=2.0,
    ),
    Scenario(
        "refused-move", "4.3, 7.10",
        "the host refuses the client's move: it signs a move again at the same counter",
        faults=(Fault("refuse-move", cue="play"),),
        expect=(
            Expect("refused", {}, "a move of its own"),
            Expect("env", {"again": True},
                   "an envelope signed again at the counter of the refused one"),
        ),
        deadline=90.0,
    ),
    Scenario(
        "seat-out", "7.9",
        "a seat resigns: the hand is void and the client deals the next among the seats in "
        "play (the deck's numbering) and plays it",
        seats=THREE, others={"a": BOT}, variant="standard", hands=2,
        faults=(Fault("resign", cue="play", role="a"),),
        expect=(
            Expect("record", {"author": "@a", "type": "resign"}, "(the seat resigns)"),
            Expect("record", {"author": "@client", "type": "shuffle", "hand": 2},
                   "its shuffle of the next hand, dealt among the seats in play"),
            Expect("record", {"author": "@client", "type": "move", "hand": 2},
                   "a move in the next hand"),
        ),
        deadline=120.0,
    ),
)
"""Every scenario, in the order they are listed and run."""


def by_name(name: str) -> list[Scenario]:
    """The scenario named ``name``, or else those whose name contains it."""
    exact = [s for s in SCENARIOS if s.name == name]
    return exact or [s for s in SCENARIOS if name in s.name]
