"""What idle connections cost a host: a host process (the real :class:`Host`, in a process of
its own, open-files limit raised as ``dernier host`` does) on loopback, N idle TCP connections
opened against it (none answers the challenge), its memory and descriptors read
from /proc before and after.

Printed figures, for the default admission caps and for caps raised so that the host holds
every connection (``--hold``, the cost of a connection the host keeps):

- **held**: connections the host has open (its socket descriptors minus the listener's);
- **rss**: resident memory of the host before the flood and with the flood open, and the
  difference per held connection (KiB);
- **accepted**: how long opening the N connections took (the accept rate under the caps).

Run: ``python benchmarks/bench_idle.py [--connections 2000]``. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dernier_p2p.net.admission import MAX_PENDING

HOST_SCRIPT = """
import logging, trio
from dernier_p2p.net.host import HostConfig, run_host
from dernier_p2p.wire.identity import IdentityKey
logging.disable(logging.WARNING)
config = HostConfig(players=3, port={port}, max_pending={pending}, per_address={per},
                    handshake_s=60)
trio.run(run_host, IdentityKey.generate(bytes(32)), config, None)
"""


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _sockets(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(connections: int, hold: bool) -> dict[str, float]:
    home = Path(tempfile.mkdtemp(prefix="dernier-idle-"))
    port = _free_port()
    pending = connections + 10 if hold else MAX_PENDING  # raised: the host keeps them all
    script = HOST_SCRIPT.format(port=port, pending=pending, per=min(pending, 10**6))
    host = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=str(home))
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(0.5)
        base_rss, base_sockets = _status(host.pid, "VmRSS"), _sockets(host.pid)
        held = []
        start = time.perf_counter()
        for _ in range(connections):
            held.append(socket.create_connection(("127.0.0.1", port)))
        took = time.perf_counter() - start
        sockets, last = _sockets(host.pid), -1
        while sockets != last:  # until the host has accepted what it will
            time.sleep(1.0)
            sockets, last = _sockets(host.pid), sockets
        rss = _status(host.pid, "VmRSS")
        for s in held:
            s.close()
    finally:
        host.kill()
        host.wait()
    kept = sockets - base_sockets
    return {"held": kept, "base_kib": base_rss, "rss_kib": rss, "took_s": took,
            "per_conn_kib": (rss - base_rss) / kept if kept else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=2000)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    for hold in (False, True):
        r = measure(args.connections, hold)
        label = "caps raised (host holds all)" if hold else "default caps"
        print(f"{label}: {args.connections} idle connections opened in {r['took_s']:.2f} s; "
              f"host holds {r['held']:.0f}; RSS {r['base_kib'] / 1024:.1f} -> "
              f"{r['rss_kib'] / 1024:.1f} MiB; {r['per_conn_kib']:.1f} KiB per held connection")


if __name__ == "__main__":
    main()
