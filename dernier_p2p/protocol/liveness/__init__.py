"""The liveness core (PROTOCOL.md 7.5, 7.6, 18): who is absent, who hosts, who loses.

Pure state machines in the manner of etcd's raft library, which keeps only the algorithm and
leaves network, disk and clock to its caller: events go in with the time (records applied,
frames received, probe answers, connections made and lost), actions come out (frames to send,
votes, probes, dials, a take-over) with the next deadline. The drivers in
:mod:`dernier_p2p.net` carry the actions out and wake at the deadline; the simulator
(:mod:`dernier_p2p.sim`) drives the same machines on a virtual clock.

- :mod:`.table`: the rules, one row each, named as PROTOCOL.md names them;
- :mod:`.budgets`: every duration, and the budgets of work (18.2);
- :mod:`.waits`: the clocks of waits and drops;
- :mod:`.evidence`: what counts as evidence of censorship;
- :mod:`.seat`: a seat's machine; :mod:`.host`: the host's;
- :mod:`.actions`: what the machines ask for.
"""

from dernier_p2p.protocol.liveness.budgets import Budgets
from dernier_p2p.protocol.liveness.host import HostWatch
from dernier_p2p.protocol.liveness.seat import SeatWatch
from dernier_p2p.protocol.liveness.table import RULES

__all__ = ["RULES", "Budgets", "HostWatch", "SeatWatch"]
