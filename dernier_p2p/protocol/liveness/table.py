"""The liveness rules of PROTOCOL.md 7.5, one row each: who may do what, and when.

The machines (:mod:`.seat`, :mod:`.host`) name the rule behind every action they return, with
these names; PROTOCOL.md's table uses the same names, and a test holds the two together.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    name: str
    who: str
    when: str
    does: str


RULES: tuple[Rule, ...] = (
    Rule("beat", "every peer's network code", "nothing sent on a host connection for beat_ms",
         "send beat (while the node works too: the drivers send it)"),
    Rule("silent", "every peer", "nothing came on a host connection for silence_ms",
         "close it as broken"),
    Rule("dropped", "host", "a seat's connection closed or went silent",
         "report it dropped to every other connection; its grace runs"),
    Rule("back", "host, and every seat on the report", "the seat resumed",
         "report it back; end the drop; once per wait restart the wait with the catch-up "
         "budget"),
    Rule("reconnect", "seat", "its host connection is down", "resume, at most every retry_ms"),
    Rule("probe", "seat", "the wait on X reached limit(X), or X was reported dropped grace_ms "
         "ago, or awaited X urged this seat while it plays with the host and deposes nobody; "
         "X gives an address; not probed for probe_every_ms", "probe X"),
    Rule("pass-on", "seat", "a probe of X shows an envelope (after the end, until it is final, "
         "its ack of the end too: 7.11)", "pass it to the host"),
    Rule("lend", "seat", "a probe of X answers with have below the record that began the "
         "wait on X; or this seat stopped with a proof; or the match ended, to a seat it lent "
         "to; or its host refused an own envelope as echoing a head that host signed (FORK)",
         "send X the records after its have over a link (once per wait, and once more if a "
         "probe when the restarted wait ran out shows the first never reached X: the same "
         "have, lent nil) and restart "
         "the wait with the catch-up budget; a proof (both records of a fork), or the refused "
         "head, to every seat with an address but the host"),
    Rule("timeout", "seat; the host for its own vote", "the wait on X reached limit(X); X not "
         "reported dropped; a probe showed nothing and a have at or past the record that began "
         "the wait (or the seat lent to X in this wait), or did not answer; nothing of X "
         "delivered and unsequenced; X owes more than the end's ack (7.11)",
         "vote timeout about X, once per after, and again every "
         "revote_ms while this holds"),
    Rule("left", "seat; the host for its own vote", "X reported dropped grace_ms ago, no record "
         "of X since, a probe of X did not answer", "vote left about X, once per after, and "
         "again every revote_ms while this holds"),
    Rule("gone", "seat, m >= 3", "its host connection down for gone_ms without a resume",
         "vote depose; failover"),
    Rule("censored", "seat, m >= 3", "it holds evidence of censorship",
         "vote depose; failover keeping the host connection and playing on; back to the host "
         "if the evidence goes"),
    Rule("host-late", "seat, m >= 3", "the wait on the host's seat reached limit + grace_ms; "
         "or a timeout or left vote of this seat about another seat has stood "
         "censor_ms + grace_ms since it first went to this host (over any connection to "
         "it), and revote_ms since it went again on the present one",
         "vote depose; failover as for censored, until the host's seat is no longer late and "
         "no such vote stands"),
    Rule("failover", "a seat that voted depose", "(7.6)",
         "urge each candidate for try_ms, then the old host, round again; meanwhile dial "
         "every candidate, and the old host unless still connected to it, in turn"),
    Rule("urge", "a seat in failover", "every urge_ms while it tries a candidate",
         "send its depose vote to the candidate over a link"),
    Rule("take-over", "a candidate", "it holds fresh depose votes making q(m), its own counted "
         "once it has voted", "host: gather, keeping its connection to the old host until its "
         "host_change is sequenced"),
    Rule("gather", "a new host", "(7.6)", "take resumes and forwarded records; sequence "
         "host_change once ready"),
    Rule("step-back", "a new host gathering", "no host_change try_ms after it took over",
         "stop hosting; with the old host's connection kept, play on through it (its own "
         "failover, if it deposed the host itself, from the next candidate); else failover "
         "from the next candidate"),
    Rule("lost-table", "host, m >= 3", "fewer than q(m) seats connected for gone_ms",
         "look for a candidate that hosts; resume with it with have -1"),
    Rule("tally", "host", "q(m) fresh votes of one kind about one target (one per voter: a "
         "vote that comes again counts once)",
         "sequence timeout, left or no_contest; holding a timeout or left quorum and an "
         "abandon one at once, the timeout or left alone"),
    Rule("no-contest-2", "host, m = 2", "its timeout or left condition about the other seat",
         "sequence no_contest naming it, without votes"),
    Rule("abandon", "every peer connected to the host, and the host",
         "no progress record for stuck_ms, every awaited seat past its limit, and (a seat, "
         "m >= 3, with a candidate) no envelope it delivered to the host within censor_ms of "
         "its delivery, or evidence it deposed the host for less than try_ms ago, or (in "
         "failover) before a second candidate had try_ms, or before "
         "limit(X) + censor_ms + grace_ms for an awaited X whose envelope it delivered; and (a "
         "seat) no timeout or left vote of its own whose rule holds first went less than "
         "censor_ms + grace_ms ago",
         "vote abandon, once per record, and again every revote_ms while this holds"),
    Rule("stuck", "seat", "grace_ms after its abandon vote with no record, or stuck_ms in "
         "failover (fed over links without its host: not while a seat answers its probes, "
         "up to 2 * stuck_ms)", "end the match for itself, incomplete"),
    Rule("stuck-end", "every peer connected to the host, and the host",
         "the match over, its end not final (7.11), and the condition of abandon holds (the "
         "host: for stuck_ms + grace_ms, or with no other seat connected)",
         "end the match for itself, incomplete, without an abandon vote"),
    Rule("two-seats", "seat, m = 2", "its host connection down for 2 * grace_ms",
         "end the match for itself, incomplete"),
)

NAMES = frozenset(rule.name for rule in RULES)


def rule(name: str) -> str:
    """``name``, checked to be a rule of the table (the machines name their rules by it)."""
    if name not in NAMES:
        raise KeyError(f"no liveness rule {name!r}")
    return name
