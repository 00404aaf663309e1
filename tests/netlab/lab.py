"""A small Internet in network namespaces: home routers with NAT, one with UPnP, and a "wan".

Used by the tests of Internet play (tests/netlab). Everything lives in namespaces this module
creates, named with a per-lab prefix, and is removed by :meth:`Lab.down`. The "Internet" is a
bridge inside the ``wan`` namespace with no link to the machine's own network, so nothing a test
sends can leave the lab. Its range is TEST-NET-3, 203.0.113.0/24, except in a lab with a UPnP
router: miniupnpd refuses to serve a router whose outside address is in a reserved range
(TEST-NET included), so that lab numbers its Internet 11.22.33.0/24 (still only inside it).
Each home is 192.168.N.0/24 behind its router.

    wan    W.100          the Internet side: a relay, a joiner "in a data centre"
    rtrX   W.N (wan0)     NAT (nftables masquerade) for homeX, miniupnpd if ``upnp``
           192.168.N.1 (lan0)
    homeX  192.168.N.2          a player behind that router

Needs root, ``ip`` (iproute2), ``nft`` (nftables) and, for UPnP, ``miniupnpd``;
:func:`ensure_tools` installs the missing ones with apt-get on first use.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TEST_NET = "203.0.113"
UPNP_NET = "11.22.33"  # miniupnpd refuses reserved outside addresses; exists only in the lab
TOOLS = {"ip": "iproute2", "nft": "nftables", "miniupnpd": "miniupnpd"}


def _run(*args: str, input: str | None = None) -> str:
    proc = subprocess.run(args, input=input, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _probe() -> str | None:
    """Whether a network namespace can be made here (None) or why not."""
    probe = f"dnprobe{os.getpid()}"
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"cannot create a network namespace: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _missing() -> list[str]:
    return [pkg for tool, pkg in TOOLS.items()
            if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]


def ensure_tools() -> str | None:
    """Install missing tools with apt-get; the reason the lab cannot run, or None. Where
    ``ip`` is present, namespaces are probed first, so a machine without them installs
    nothing."""
    if sys.platform != "linux":
        return "network namespaces need Linux"
    if os.geteuid() != 0:
        return "network namespaces need root"
    if "iproute2" not in _missing() and (reason := _probe()) is not None:
        return reason
    with open(Path(tempfile.gettempdir(), "dernier-netlab-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (test workers run in parallel)
        missing = _missing()
        if missing:
            if shutil.which("apt-get") is None:
                return f"missing {', '.join(missing)} and no apt-get to install them"
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            wait = ["-o", "DPkg::Lock::Timeout=300"]
            for cmd in (["apt-get", *wait, "update", "-qq"],
                        ["apt-get", *wait, "install", "-y", "-qq", *missing]):
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
                if proc.returncode != 0 and "install" in cmd:
                    return f"apt-get could not install {', '.join(missing)}: {proc.stderr[-300:]}"
    return _probe()


_made = [0]


def _prefix() -> str:
    """A short name prefix unique to this process and lab (interface names allow 15 chars)."""
    _made[0] += 1
    return f"d{os.getpid() % 100000:05d}{_made[0] % 10}"


@dataclass
class Router:
    """A home router: its namespace, its home namespace and addresses."""

    name: str
    n: int
    upnp: bool
    ns: str
    home_ns: str
    net: str

    @property
    def wan_ip(self) -> str:
        return f"{self.net}.{self.n}"

    @property
    def home_ip(self) -> str:
        return f"192.168.{self.n}.2"


@dataclass
class Lab:
    """The namespaces of one test; :meth:`up` builds them, :meth:`down` removes everything."""

    routers: dict[str, bool]  # name -> runs miniupnpd
    prefix: str = field(default_factory=lambda: _prefix())
    made: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    rtr: dict[str, Router] = field(default_factory=dict)
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="netlab-")))

    @property
    def wan(self) -> str:
        return f"{self.prefix}-wan"

    @property
    def net(self) -> str:
        """The Internet's first three octets (see the module docstring)."""
        return UPNP_NET if any(self.routers.values()) else TEST_NET

    @property
    def wan_ip(self) -> str:
        """The address of the ``wan`` namespace (a relay or a joiner on the Internet)."""
        return f"{self.net}.100"

    def _ns(self, name: str) -> str:
        ns = f"{self.prefix}-{name}"
        _run("ip", "netns", "add", ns)
        self.made.append(ns)
        _run("ip", "-n", ns, "link", "set", "lo", "up")
        return ns

    def up(self) -> Lab:
        wan = self._ns("wan")
        _run("ip", "-n", wan, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", wan, "link", "set", "br0", "up")
        _run("ip", "-n", wan, "addr", "add", f"{self.wan_ip}/24", "dev", "br0")
        for k, (name, upnp) in enumerate(self.routers.items()):
            n = 10 * (k + 1)
            r = Router(name, n, upnp, self._ns(f"rtr{name}"), self._ns(f"home{name}"),
                       self.net)
            self.rtr[name] = r
            self._wire(r)
            if upnp:
                self._miniupnpd(r)
        return self

    def _wire(self, r: Router) -> None:
        p, x = self.prefix, r.name
        _run("ip", "link", "add", f"{p}o{x}", "type", "veth", "peer", "name", f"{p}w{x}")
        _run("ip", "link", "set", f"{p}o{x}", "netns", r.ns)
        _run("ip", "link", "set", f"{p}w{x}", "netns", self.wan)
        _run("ip", "-n", self.wan, "link", "set", f"{p}w{x}", "master", "br0")
        _run("ip", "-n", self.wan, "link", "set", f"{p}w{x}", "up")
        _run("ip", "-n", r.ns, "link", "set", f"{p}o{x}", "name", "wan0")
        _run("ip", "-n", r.ns, "addr", "add", f"{r.wan_ip}/24", "dev", "wan0")
        _run("ip", "-n", r.ns, "link", "set", "wan0", "up")
        _run("ip", "link", "add", f"{p}i{x}", "type", "veth", "peer", "name", f"{p}h{x}")
        _run("ip", "link", "set", f"{p}i{x}", "netns", r.ns)
        _run("ip", "link", "set", f"{p}h{x}", "netns", r.home_ns)
        _run("ip", "-n", r.ns, "link", "set", f"{p}i{x}", "name", "lan0")
        _run("ip", "-n", r.ns, "addr", "add", f"192.168.{r.n}.1/24", "dev", "lan0")
        _run("ip", "-n", r.ns, "link", "set", "lan0", "up")
        _run("ip", "-n", r.home_ns, "link", "set", f"{p}h{x}", "name", "eth0")
        _run("ip", "-n", r.home_ns, "addr", "add", f"{r.home_ip}/24", "dev", "eth0")
        _run("ip", "-n", r.home_ns, "link", "set", "eth0", "up")
        _run("ip", "-n", r.home_ns, "route", "add", "default", "via", f"192.168.{r.n}.1")
        _run("ip", "netns", "exec", r.ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        _run("ip", "netns", "exec", r.ns, "nft", "-f", "-", input=(
            "table ip nat {\n"
            " chain prerouting { type nat hook prerouting priority -100; }\n"
            ' chain postrouting { type nat hook postrouting priority 100; oifname "wan0"'
            " masquerade; }\n}\n"))

    def _miniupnpd(self, r: Router) -> None:
        _run("ip", "netns", "exec", r.ns, "nft", "-f", "-", input=(
            "table inet filter {\n"
            " chain forward { type filter hook forward priority 0; policy accept;"
            " jump miniupnpd; }\n"
            " chain miniupnpd { }\n"
            " chain prerouting_miniupnpd { type nat hook prerouting priority -100;"
            " policy accept; }\n"
            " chain postrouting_miniupnpd { type nat hook postrouting priority 100;"
            " policy accept; }\n}\n"))
        _run("ip", "-n", r.ns, "route", "add", "239.0.0.0/8", "dev", "lan0")
        conf = self.tmp / f"miniupnpd-{r.name}.conf"
        conf.write_text("\n".join([
            "ext_ifname=wan0", "listening_ip=lan0", "enable_natpmp=yes", "enable_upnp=yes",
            "secure_mode=yes", "system_uptime=yes",
            f"allow 1024-65535 192.168.{r.n}.0/24 1024-65535", "deny 0-65535 0.0.0.0/0 0-65535",
            "upnp_table_name=filter", "upnp_nat_table_name=filter",
            "upnp_forward_chain=miniupnpd", "upnp_nat_chain=prerouting_miniupnpd",
            "upnp_nat_postrouting_chain=postrouting_miniupnpd", ""]))
        log = open(self.tmp / f"miniupnpd-{r.name}.log", "wb")
        self.procs.append(subprocess.Popen(
            ["ip", "netns", "exec", r.ns, "miniupnpd", "-d", "-f", str(conf),
             "-P", str(self.tmp / f"miniupnpd-{r.name}.pid")],
            stdout=log, stderr=subprocess.STDOUT))
        time.sleep(0.3)

    def stop_upnp(self, name: str) -> None:
        """Kill the router's miniupnpd (a router whose UPnP died)."""
        self._kill_ns(self.rtr[name].ns)

    def refuse_upnp(self, name: str) -> None:
        """The router refuses (a TCP reset) every connection its home opens to it, UPnP's
        control requests among them: it takes no renewal of a UPnP mapping, though the
        mappings it holds still forward until their leases run out."""
        _run("ip", "netns", "exec", self.rtr[name].ns, "nft", "-f", "-", input=(
            "table inet refuse {\n chain input { type filter hook input priority -5;"
            ' policy accept; iifname "lan0" meta l4proto tcp reject with tcp reset; }\n}\n'))

    def accept_upnp(self, name: str) -> None:
        """Undo :meth:`refuse_upnp`: the router takes its home's UPnP requests again."""
        _run("ip", "netns", "exec", self.rtr[name].ns, "nft", "delete", "table", "inet",
             "refuse")

    def unplug(self, name: str) -> None:
        """Take the router off the Internet (its wan link down): packets to it vanish."""
        _run("ip", "-n", self.rtr[name].ns, "link", "set", "wan0", "down")

    def cmd(self, ns: str, *args: str) -> list[str]:
        """``args`` run inside namespace ``ns``."""
        return ["ip", "netns", "exec", ns, *args]

    def spawn(self, ns: str, out: Path, *args: str, env: dict[str, str] | None = None
              ) -> subprocess.Popen[bytes]:
        """Start a process in ``ns`` with stdout and stderr to ``out``; killed by :meth:`down`."""
        with open(out, "wb") as sink:
            proc = subprocess.Popen(self.cmd(ns, *args), stdin=subprocess.DEVNULL, stdout=sink,
                                    stderr=subprocess.STDOUT, env=env)
        self.procs.append(proc)
        return proc

    def _kill_ns(self, ns: str) -> None:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in pids.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass

    def down(self) -> None:
        """Kill every process started in the lab and remove every namespace and link."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for ns in self.made:
            self._kill_ns(ns)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.made.clear()
        shutil.rmtree(self.tmp, ignore_errors=True)
