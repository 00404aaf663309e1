"""A scripted UPnP router on loopback: what a home router's UPnP-IGD says, word for word.

It answers miniupnpc the way a router does, from a :class:`Script` of raw replies:

* the device list a local SSDP daemon (minissdpd) gives on its Unix socket, which miniupnpc
  asks before it searches the network: the description URL, the device type and its name;
* optionally, an SSDP answer (HTTP over UDP) to the M-SEARCH multicast on 239.255.255.250:1900
  (only where multicast reaches loopback: a network namespace of its own);
* the device's XML description (HTTP GET) and the SOAP replies of the WANIPConnection actions
  (HTTP POST, by the SOAPAction header): GetStatusInfo, GetExternalIPAddress, AddPortMapping,
  AddAnyPortMapping, GetSpecificPortMappingEntry, DeletePortMapping.

A reply named in ``Script.stall`` is sent in part and then the connection stays silent until
the script is replaced or the router stops (a router that never finishes its answer). Every
connection is closed when the next script is set, so nothing a case left open outlives it.
"""

from __future__ import annotations

import os
import socket
import struct
import tempfile
import threading
from dataclasses import dataclass, field

IGD = "urn:schemas-upnp-org:device:InternetGatewayDevice:1"
WANIP = "urn:schemas-upnp-org:service:WANIPConnection:1"
ACTIONS = ("GetStatusInfo", "GetExternalIPAddress", "AddPortMapping", "AddAnyPortMapping",
           "GetSpecificPortMappingEntry", "DeletePortMapping")
SSDP_GROUP = ("239.255.255.250", 1900)
MAX_REQUEST = 64 * 1024


def http(body: bytes, status: str = "200 OK", content_type: str = 'text/xml; charset="utf-8"'
         ) -> bytes:
    """A whole HTTP/1.1 reply carrying ``body``."""
    return (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def description(port: int) -> bytes:
    """An IGD's root description: one WAN device, its WANIPConnection service on ``port``."""
    base = f"http://127.0.0.1:{port}"
    return f"""<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0"><specVersion><major>1</major><minor>0</minor>
</specVersion><URLBase>{base}</URLBase><device><deviceType>{IGD}</deviceType>
<friendlyName>router</friendlyName><UDN>uuid:00000000-0000-0000-0000-000000000001</UDN>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANDevice:1</deviceType>
<UDN>uuid:00000000-0000-0000-0000-000000000002</UDN><serviceList><service>
<serviceType>urn:schemas-upnp-org:service:WANCommonInterfaceConfig:1</serviceType>
<serviceId>urn:upnp-org:serviceId:WANCommonIFC1</serviceId><controlURL>/ctl/CmnIfCfg</controlURL>
<eventSubURL>/evt/CmnIfCfg</eventSubURL><SCPDURL>/WANCfg.xml</SCPDURL></service></serviceList>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:1</deviceType>
<UDN>uuid:00000000-0000-0000-0000-000000000003</UDN><serviceList><service>
<serviceType>{WANIP}</serviceType><serviceId>urn:upnp-org:serviceId:WANIPConn1</serviceId>
<controlURL>/ctl/IPConn</controlURL><eventSubURL>/evt/IPConn</eventSubURL>
<SCPDURL>/WANIPCn.xml</SCPDURL></service></serviceList></device></deviceList></device>
</deviceList></device></root>
""".encode()


def soap(action: str, values: dict[str, str]) -> bytes:
    """The SOAP body answering ``action`` with ``values``."""
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in values.items())
    return ('<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/'
            'envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
            f'<u:{action}Response xmlns:u="{WANIP}">{inner}</u:{action}Response></s:Body>'
            "</s:Envelope>\r\n").encode()


def fault(code: int, text: str) -> bytes:
    """A SOAP fault (UPnPError ``code``), sent with status 500."""
    return http(('<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/'
                 'soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode>'
                 '<faultstring>UPnPError</faultstring><detail><UPnPError xmlns="urn:'
                 f'schemas-upnp-org:control-1-0"><errorCode>{code}</errorCode><errorDescription>'
                 f"{text}</errorDescription></UPnPError></detail></s:Fault></s:Body>"
                 "</s:Envelope>\r\n").encode(), "500 Internal Server Error")


def _length(n: int) -> bytes:
    """minissdpd's length prefix: 7 bits a byte, the high bit saying another byte follows."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def device_list(url: str, st: str = IGD, usn: str = "uuid:00000000::" + IGD) -> bytes:
    """minissdpd's answer naming one device."""
    out = b"\x01"
    for text in (url, st, usn):
        raw = text.encode()
        out += _length(len(raw)) + raw
    return out


def ssdp_answer(url: str, st: str = IGD) -> bytes:
    """A router's SSDP answer to an M-SEARCH."""
    return (f"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\nST: {st}\r\nUSN: uuid:00000000::"
            f"{st}\r\nEXT:\r\nSERVER: router UPnP/1.1\r\nLOCATION: {url}\r\n\r\n").encode()


def honest(port: int, external_ip: str = "11.22.33.4", lanaddr: str = "127.0.0.1",
           internal_port: int = 47630, external_port: int = 47630, lease: int = 3600
           ) -> dict[str, bytes]:
    """The replies of a router that behaves (its HTTP server on ``port``): every action
    answered as miniupnpd does, AddAnyPortMapping with ``external_port``, the mapping read back
    as forwarded to ``lanaddr``:``internal_port`` for ``lease`` seconds."""
    return {
        "desc": http(description(port)),
        "GetStatusInfo": http(soap("GetStatusInfo", {
            "NewConnectionStatus": "Connected", "NewLastConnectionError": "ERROR_NONE",
            "NewUptime": "100"})),
        "GetExternalIPAddress": http(soap("GetExternalIPAddress",
                                          {"NewExternalIPAddress": external_ip})),
        "AddPortMapping": http(soap("AddPortMapping", {})),
        "AddAnyPortMapping": http(soap("AddAnyPortMapping",
                                       {"NewReservedPort": str(external_port)})),
        "GetSpecificPortMappingEntry": http(soap("GetSpecificPortMappingEntry", {
            "NewInternalPort": str(internal_port), "NewInternalClient": lanaddr,
            "NewEnabled": "1", "NewPortMappingDescription": "dernier table",
            "NewLeaseDuration": str(lease)})),
        "DeletePortMapping": http(soap("DeletePortMapping", {})),
    }


@dataclass
class Script:
    """What the router says: ``devices`` (minissdpd's answer), ``ssdp`` (answers to an
    M-SEARCH), ``replies`` (an HTTP reply per action and ``desc``; a missing one: the
    connection is closed unanswered), ``stall`` (the reply sent in part, then silence)."""

    devices: bytes = b""
    ssdp: list[bytes] = field(default_factory=list)
    replies: dict[str, bytes] = field(default_factory=dict)
    stall: str = ""


class Router:
    """The scripted router: a minissdpd socket, an HTTP server on 127.0.0.1 and, with
    ``ssdp=True``, an SSDP responder. Start with :meth:`start`, stop with :meth:`stop`."""

    def __init__(self, ssdp: bool = False) -> None:
        self.dir = tempfile.mkdtemp(prefix="dernier-upnp-")
        self.minissdpd = os.path.join(self.dir, "minissdpd.sock")
        self.script = Script()
        self.asked: list[str] = []  # what was asked, in order (reset with each script)
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        self._unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._unix.bind(self.minissdpd)
        self._unix.listen(64)
        self._tcp = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self._tcp.getsockname()[1]
        self._udp: socket.socket | None = None
        if ssdp:
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            udp.bind(("", SSDP_GROUP[1]))
            udp.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                           struct.pack("4s4s", socket.inet_aton(SSDP_GROUP[0]),
                                       socket.inet_aton("127.0.0.1")))
            self._udp = udp
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/rootDesc.xml"

    def start(self) -> Router:
        for target in (self._serve_unix, self._serve_tcp, self._serve_udp):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def set(self, script: Script) -> None:
        """Play ``script`` from now on; close every connection the last one left open."""
        with self._lock:
            self.script = script
            self.asked = []
            old, self._open = self._open, []
        for conn in old:
            _close(conn)

    def stop(self) -> None:
        self._stop.set()
        self.set(Script())
        for sock in (self._unix, self._tcp, self._udp):
            if sock is not None:
                _close(sock)
        for thread in self._threads:
            thread.join(timeout=2)
        try:
            os.unlink(self.minissdpd)
            os.rmdir(self.dir)
        except OSError:
            pass

    # ------------------------------------------------------------------ serving
    def _accept(self, listener: socket.socket) -> tuple[socket.socket, Script] | None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return None
        conn.settimeout(5)
        with self._lock:
            self._open.append(conn)
            return conn, self.script

    def _serve_unix(self) -> None:
        while not self._stop.is_set():
            got = self._accept(self._unix)
            if got is None:
                continue
            conn, script = got
            try:
                conn.recv(1024)
                self._note("devices")
                conn.sendall(script.devices)
            except OSError:
                pass
            self._done(conn)

    def _serve_tcp(self) -> None:
        while not self._stop.is_set():
            got = self._accept(self._tcp)
            if got is None:
                continue
            threading.Thread(target=self._answer, args=got, daemon=True).start()

    def _serve_udp(self) -> None:
        udp = self._udp
        while udp is not None and not self._stop.is_set():
            try:
                data, peer = udp.recvfrom(2048)
            except OSError:
                return
            if not data.startswith(b"M-SEARCH"):
                continue
            self._note("ssdp")
            for answer in self.script.ssdp:
                try:
                    udp.sendto(answer, peer)
                except OSError:
                    pass

    def _answer(self, conn: socket.socket, script: Script) -> None:
        try:
            what = _request(conn)
        except OSError:
            what = None
        if what is None:
            self._done(conn)
            return
        self._note(what)
        reply = script.replies.get(what)
        try:
            if reply is not None and what == script.stall:
                conn.sendall(reply[: len(reply) // 2])
                return  # left open and silent: closed with the next script
            if reply is not None:
                conn.sendall(reply)
        except OSError:
            pass
        self._done(conn)

    def _note(self, what: str) -> None:
        with self._lock:
            self.asked.append(what)

    def _done(self, conn: socket.socket) -> None:
        with self._lock:
            if conn in self._open:
                self._open.remove(conn)
        _close(conn)


def _request(conn: socket.socket) -> str | None:
    """Read one HTTP request; ``desc`` for a GET, the SOAP action's name for a POST."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk or len(data) > MAX_REQUEST:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if lines[0].startswith("GET"):
        return "desc"
    length = 0
    action = ""
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip() or 0)
        elif name.strip().lower() == "soapaction":
            action = value.strip().strip('"').rpartition("#")[2]
    while len(body) < min(length, MAX_REQUEST):
        chunk = conn.recv(4096)
        if not chunk:
            break
        body += chunk
    return action or None


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
