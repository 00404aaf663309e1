"""Asking the home router's IPv6 firewall for a pinhole by UPnP (IGDv2 WANIPv6FirewallControl).

Beside PCP (:mod:`.pinhole`), a router whose UPnP IGD is version 2 may offer pinholes as SOAP
actions: ``AddPinhole`` (the firewall lets the Internet in to one address and port for a
lease, and names the pinhole by a ``UniqueID``), ``UpdatePinhole`` (a new lease) and
``DeletePinhole``. The router is found by an SSDP search over IPv6 (``ff02::c``, on the link
of an IPv6 default router); its answer names a description (XML, over HTTP) that names the
service's control URL. The SOAP request must come from the address the pinhole is for (a
router in secure mode lets a machine open its own ports only), so everything goes over IPv6.

Every byte from the router is hostile: the pure functions here (:func:`search_request`,
:func:`read_search_reply`, :func:`read_description`, :func:`soap_request`,
:func:`read_http`, :func:`read_soap`) judge sizes, syntax and addresses and raise
:class:`~.pinhole.PinholeError` naming what is wrong, never a traceback; :func:`discover`
and :func:`call` only move those bytes over sockets, within a time and size budget.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from xml.parsers import expat

import trio

from dernier_p2p.net import pinhole as ph  # (which imports this module: its names at call time)

SERVICE = "urn:schemas-upnp-org:service:WANIPv6FirewallControl:1"
SSDP_GROUP = "ff02::c"  # SSDP's link-local multicast group (UPnP Device Architecture 1.1)
SSDP_PORT = 1900
MAX_SEARCH_REPLY = 2048  # bytes of an SSDP answer
MAX_DESCRIPTION = 65536  # bytes of a device description (headers included)
MAX_SOAP_REPLY = 16384  # bytes of a SOAP answer (headers included)
MAX_PATH = 256  # characters of a description's or a control URL's path
MAX_DEPTH = 32  # elements nested in a description or a SOAP answer (IGDv2's: about 10)
TCP = 6
LEASE_S = 3600  # asked; IGDv2 allows 1..86400
_LOCATION = re.compile(r"http://\[([0-9A-Fa-f:.]+)\]:(\d{1,5})(/[!-~]*)")
_TOKEN = re.compile(r"[0-9]{1,5}")


@dataclass(frozen=True)
class Control:
    """Where a router takes WANIPv6FirewallControl actions: its IPv6 ``host``, TCP ``port``
    and the control URL's ``path`` (with the interface index ``scope`` of a link-local
    host, else 0)."""

    host: str
    port: int
    path: str
    scope: int = 0


def search_request(host: str = SSDP_GROUP.upper()) -> bytes:
    """An SSDP M-SEARCH for the IPv6 firewall control service, to the SSDP group or (unicast,
    UPnP Device Architecture 1.1) to the router ``host``."""
    ipaddress.IPv6Address(host)  # (a ValueError for anything else)
    return ("M-SEARCH * HTTP/1.1\r\n"
            f"HOST: [{host}]:{SSDP_PORT}\r\n"
            'MAN: "ssdp:discover"\r\n'
            "MX: 1\r\n"
            f"ST: {SERVICE}\r\n\r\n").encode()


def _headers(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}", name):
            raise ph.PinholeError("a header line that is not `name: value`")
        out.setdefault(name.lower(), value.strip())
    return out


def _every(lines: list[str], name: str) -> list[str]:
    """The values of every header ``name`` (lower case) in ``lines`` (an HTTP head: the
    status line, then the header lines)."""
    return [value.strip() for key, _, value in (line.partition(":") for line in lines[1:])
            if key.lower() == name]


def read_search_reply(data: bytes, source: str, near: list[str]) -> tuple[str, int, str]:
    """The description's IPv6 address, port and path from an SSDP answer ``data`` that came
    from ``source``. The address must be ``source`` itself, one of ``near`` (the IPv6
    default routers), or on the /64 of one of them (another of the router's own addresses):
    a machine that answers cannot send this one elsewhere."""
    if len(data) > MAX_SEARCH_REPLY:
        raise ph.PinholeError("an SSDP answer above 2048 bytes")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ph.PinholeError("an SSDP answer that is not ASCII") from None
    head, _, _ = text.partition("\r\n\r\n")
    lines = head.split("\r\n")
    if not re.fullmatch(r"HTTP/1\.[01] 200 [ -~]*", lines[0]):
        raise ph.PinholeError("an SSDP answer that is not `HTTP/1.1 200`")
    headers = _headers(lines[1:])
    if headers.get("st") != SERVICE:
        raise ph.PinholeError("an SSDP answer for another service")
    found = _LOCATION.fullmatch(headers.get("location", ""))
    if found is None:
        raise ph.PinholeError("an SSDP LOCATION that is not http://[IPv6]:port/path")
    host, port, path = found.group(1), int(found.group(2)), found.group(3)
    try:
        ip = ipaddress.IPv6Address(host)
    except ValueError:
        raise ph.PinholeError("an SSDP LOCATION whose address is not IPv6") from None
    if not 0 < port < 65536 or len(path) > MAX_PATH:
        raise ph.PinholeError("an SSDP LOCATION with a bad port or a path above 256 characters")
    if not _near(ip, source, near):
        raise ph.PinholeError(f"an SSDP LOCATION at {ip}, not the router that answered")
    return str(ip), port, path


def _near(ip: ipaddress.IPv6Address, source: str, near: list[str]) -> bool:
    """Whether ``ip`` is ``source``, one of ``near`` or on the /64 of one of them."""
    for other in (source, *near):
        try:
            them = ipaddress.IPv6Address(other.split("%", 1)[0])
        except ValueError:
            continue
        if ip == them or (not ip.is_link_local and not them.is_link_local
                          and ip in ipaddress.IPv6Network(f"{them}/64", strict=False)):
            return True
    return False


def _xml(data: bytes, what: str) -> ET.Element:
    """The element tree of ``data`` (``what``: a name for the messages), read by expat as
    UTF-8 (or UTF-16 after a byte order mark) whatever encoding it declares: no codec is
    looked up. A DOCTYPE is refused where expat meets it, before any entity is declared (so
    none but XML's five and character references), and so are elements nested deeper than
    :data:`MAX_DEPTH`; time and memory are linear in the (bounded) input."""
    parser = expat.ParserCreate("utf-8", "}")
    builder = ET.TreeBuilder()
    depth = 0

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_DEPTH:
            raise ph.PinholeError(f"{what} nested deeper than {MAX_DEPTH} elements")
        builder.start(tag, attrs)

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        builder.end(tag)

    def doctype(*_: object) -> None:
        raise ph.PinholeError(f"{what} with a DOCTYPE")

    parser.buffer_text = True
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = doctype
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise ph.PinholeError(f"{what} that is not XML ({exc})") from None
    return builder.close()


def read_description(xml: bytes, base: str = "/") -> str:
    """The path of the WANIPv6FirewallControl control URL in a device description ``xml``
    read at the path ``base``: an absolute path, a relative one (to ``base``'s folder), or
    an http URL of which the path is kept (the host is the one the description came from).
    No DOCTYPE (no entities to expand), no other encoding than UTF-8 or UTF-16."""
    if len(xml) > MAX_DESCRIPTION:
        raise ph.PinholeError("a device description above 64 KiB")
    root = _xml(xml, "a device description")
    for service in root.iter():
        if not service.tag.endswith("}service") and service.tag != "service":
            continue
        fields = {child.tag.rsplit("}", 1)[-1]: (child.text or "").strip() for child in service}
        if fields.get("serviceType") != SERVICE:
            continue
        url = fields.get("controlURL", "")
        if url.startswith("http://"):
            url = "/" + url[7:].partition("/")[2]
        elif url and not url.startswith("/"):
            url = base.rpartition("/")[0] + "/" + url
        if not re.fullmatch(r"/[!-~]{0,255}", url):
            raise ph.PinholeError("a control URL that is not a path of at most 256 characters")
        return url
    raise ph.PinholeError("the router offers no IPv6 firewall control (WANIPv6FirewallControl)")


def soap_request(control: Control, action: str, args: list[tuple[str, str]]) -> bytes:
    """An HTTP POST of the SOAP ``action`` with ``args`` (name, value; values are digits or
    an IPv6 address, nothing to escape) to ``control``."""
    for _, value in args:
        if not re.fullmatch(r"[0-9A-Fa-f:.]*", value):
            raise ValueError(f"a SOAP argument that is not a number or an address: {value!r}")
    body = ('<?xml version="1.0"?>\r\n'
            '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" '
            's:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
            f'<u:{action} xmlns:u="{SERVICE}">'
            + "".join(f"<{name}>{value}</{name}>" for name, value in args)
            + f"</u:{action}></s:Body></s:Envelope>\r\n").encode()
    head = (f"POST {control.path} HTTP/1.1\r\n"
            f"Host: [{control.host}]:{control.port}\r\n"
            'Content-Type: text/xml; charset="utf-8"\r\n'
            f'SOAPAction: "{SERVICE}#{action}"\r\n'
            f"Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n")
    return head.encode() + body


def get_request(host: str, port: int, path: str) -> bytes:
    """An HTTP GET of ``path`` at ``[host]:port``."""
    return (f"GET {path} HTTP/1.1\r\nHost: [{host}]:{port}\r\n"
            "Connection: close\r\n\r\n").encode()


def read_http(data: bytes, limit: int) -> tuple[int, bytes]:
    """The status (100 to 599) and body of an HTTP/1.x answer ``data`` read to its end (at
    most ``limit`` bytes). A body in the chunked transfer coding is joined from its chunks
    (:func:`dechunk`; no other transfer coding is read, and no Content-Length may come with
    it); else its Content-Length (if given, and given alike if given again) must hold."""
    if len(data) > limit:
        raise ph.PinholeError(f"an HTTP answer above {limit} bytes")
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        raise ph.PinholeError("an HTTP answer without the end of its headers")
    try:
        lines = head.decode("ascii").split("\r\n")
    except UnicodeDecodeError:
        raise ph.PinholeError("HTTP headers that are not ASCII") from None
    found = re.fullmatch(r"HTTP/1\.[01] ([1-5][0-9][0-9])( [ -~]*)?", lines[0])
    if found is None:
        raise ph.PinholeError("an HTTP answer without a status line")
    headers = _headers(lines[1:])
    codings = [c.strip().lower() for v in _every(lines, "transfer-encoding")
               for c in v.split(",")]
    lengths = _every(lines, "content-length")
    if codings:  # (RFC 9112 6.1: chunked comes last, once; we decode no other coding)
        if lengths:
            raise ph.PinholeError("an HTTP answer with both a Transfer-Encoding and a "
                                  "Content-Length")
        if [c for c in codings if c != "identity"] != ["chunked"]:
            shown = ", ".join(c for c in codings if c.isprintable())[:40]
            raise ph.PinholeError(f"an HTTP answer in a transfer coding not read here ({shown})")
        return int(found.group(1)), dechunk(body)
    length = headers.get("content-length")
    if len(set(lengths)) > 1:  # (RFC 9112 6.3: not a framing)
        raise ph.PinholeError("an HTTP answer with Content-Lengths that differ")
    if length is not None:
        if not _TOKEN.fullmatch(length):
            raise ph.PinholeError("an HTTP answer whose Content-Length is not a number below "
                                  "100000")
        if int(length) > len(body):
            raise ph.PinholeError("an HTTP answer shorter than its Content-Length")
        body = body[:int(length)]
    return int(found.group(1)), body


_CHUNK = re.compile(rb"([0-9A-Fa-f]{1,6})[ \t]*(?:;[ -~\t]*)?\r\n")


def dechunk(body: bytes) -> bytes:
    """The data of a body in the chunked transfer coding (RFC 9112 7.1): chunks of a hex size
    (at most 6 digits; extensions ignored), each followed by CRLF, up to the chunk of size
    0; the trailer fields after it are ignored. :class:`~.pinhole.PinholeError` where a
    chunk's size line is not one, a chunk is cut short or not ended by CRLF, or the chunk
    of size 0 never comes."""
    out = bytearray()
    at = 0
    while True:
        line = _CHUNK.match(body, at)
        if line is None:
            raise ph.PinholeError("a chunked HTTP answer whose chunk size is not one"
                                  if at < len(body) else
                                  "a chunked HTTP answer without its last chunk")
        size = int(line.group(1), 16)
        at = line.end()
        if size == 0:
            return bytes(out)
        if at + size + 2 > len(body):
            raise ph.PinholeError("a chunked HTTP answer cut short in a chunk")
        if body[at + size:at + size + 2] != b"\r\n":
            raise ph.PinholeError("a chunked HTTP answer whose chunk is longer than its size")
        out += body[at:at + size]
        at += size + 2


def read_soap(action: str, status: int, body: bytes) -> dict[str, str]:
    """The output arguments of a SOAP ``action``'s answer; :class:`~.pinhole.Refused` naming
    the UPnP error where the router refused, :class:`~.pinhole.PinholeError` for anything
    that is not an answer to it (a fault's errorCode must be a number)."""
    root = _xml(body, f"a SOAP answer (HTTP {status})")
    if status != 200:
        fields = {e.tag.rsplit("}", 1)[-1]: (e.text or "").strip()[:120] for e in root.iter()}
        code, what = fields.get("errorCode", ""), fields.get("errorDescription", "")
        if status == 500 and _TOKEN.fullmatch(code):
            raise ph.Refused(f"refused {action}: error {code}"
                          + (f" ({what})" if what.isprintable() and what else ""))
        raise ph.PinholeError(f"{action}: HTTP {status}")
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] == f"{action}Response":
            return {child.tag.rsplit("}", 1)[-1]: (child.text or "").strip()
                    for child in element}
    raise ph.PinholeError(f"a SOAP answer that is not {action}Response")


def unique_id(out: dict[str, str]) -> int:
    """The pinhole's UniqueID of an AddPinhole answer (IGDv2: a ui2, 0..65535)."""
    value = out.get("UniqueID", "")
    if not _TOKEN.fullmatch(value) or int(value) > 65535:
        raise ph.PinholeError("an AddPinhole answer without a UniqueID 0..65535")
    return int(value)


# ---------------------------------------------------------------------------- over sockets
async def discover(gateways: list[tuple[str, int]], timeout_s: float) -> Control:
    """Find the IPv6 firewall control of the router: an SSDP search on the link of each IPv6
    default router in ``gateways`` (address, interface index), to the SSDP group and to the
    router itself (a router listening for SSDP at one address of its own gets no multicast),
    the description of the first usable answer, its control URL.
    :class:`~.pinhole.PinholeError` if none is found within ``timeout_s``, or at once where
    every router refuses the search sent to it (nothing listens for SSDP there)."""
    if not gateways:
        raise ph.PinholeError("no IPv6 default router to ask")
    near = [host for host, _ in gateways]
    why: list[str] = []
    found: list[Control] = []
    refused = [0]
    sockets: list[trio.socket.SocketType] = []

    def note(text: str) -> None:
        if len(why) < 4:  # (a flood of answers keeps no more)
            why.append(text)

    async def answers(sock: trio.socket.SocketType, unicast: bool,
                      scope: trio.CancelScope) -> None:
        while True:
            try:
                data, source = await sock.recvfrom(MAX_SEARCH_REPLY + 1)
            except OSError as exc:  # the router refused the search sent to it
                if unicast:
                    refused[0] += 1
                    note(f"SSDP: {exc.strerror or exc}")
                    if refused[0] == len(gateways):
                        scope.cancel()
                return
            try:
                host, port, path = read_search_reply(data, source[0], near)
                link = source[3] if ipaddress.IPv6Address(host).is_link_local else 0
                status, xml = await _exchange(host, port, link, get_request(host, port, path),
                                              MAX_DESCRIPTION)
                if status != 200:
                    raise ph.PinholeError(f"the description answered HTTP {status}")
                found.append(Control(host, port, read_description(xml, path), link))
                scope.cancel()
                return
            except (ph.PinholeError, OSError) as exc:
                note(str(exc))

    try:
        with trio.move_on_after(timeout_s):
            async with trio.open_nursery() as nursery:
                group = trio.socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                sockets.append(group)
                await group.bind(("::", 0))
                for _host, index in gateways:
                    try:
                        await group.sendto(search_request(), (SSDP_GROUP, SSDP_PORT, 0, index))
                    except OSError as exc:
                        note(f"SSDP: {exc.strerror or exc}")
                nursery.start_soon(answers, group, False, nursery.cancel_scope)
                for host, index in gateways:  # connected: a refusal comes back as an error
                    scope = index if ipaddress.IPv6Address(host).is_link_local else 0
                    router = trio.socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                    sockets.append(router)
                    try:
                        await router.connect((host, SSDP_PORT, 0, scope))
                        await router.send(search_request(host))
                    except OSError as exc:
                        refused[0] += 1
                        note(f"SSDP: {exc.strerror or exc}")
                        continue
                    nursery.start_soon(answers, router, True, nursery.cancel_scope)
                if refused[0] == len(gateways):
                    nursery.cancel_scope.cancel()
    finally:
        for sock in sockets:
            sock.close()
    if found:
        return found[0]
    raise ph.PinholeError("; ".join(why) or f"no UPnP IPv6 firewall answered in {timeout_s:g} s")


async def _exchange(host: str, port: int, scope: int, request: bytes,
                    limit: int) -> tuple[int, bytes]:
    """Send ``request`` over a new TCP connection and read the answer to its end (at most
    ``limit`` bytes)."""
    sock = trio.socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    with sock:
        await sock.connect((host, port, 0, scope))
        stream = trio.SocketStream(sock)
        await stream.send_all(request)
        data = bytearray()
        while len(data) <= limit:
            chunk = await stream.receive_some(limit + 1 - len(data))
            if not chunk:
                break
            data += chunk
    return read_http(bytes(data), limit)


async def call(control: Control, action: str, args: list[tuple[str, str]],
               timeout_s: float) -> dict[str, str]:
    """Take the SOAP ``action`` at ``control``, within ``timeout_s``: its output
    arguments."""
    try:
        with trio.fail_after(timeout_s):
            status, body = await _exchange(control.host, control.port, control.scope,
                                           soap_request(control, action, args),
                                           MAX_SOAP_REPLY)
    except trio.TooSlowError:
        raise ph.PinholeError(f"{action}: no answer in {timeout_s:g} s") from None
    except OSError as exc:
        raise ph.PinholeError(f"{action}: {exc.strerror or exc}") from None
    return read_soap(action, status, body)


async def add_pinhole(control: Control, address: str, port: int, lease_s: int,
                      timeout_s: float) -> int:
    """A pinhole to TCP ``address``:``port`` from anywhere, for ``lease_s``: its UniqueID."""
    out = await call(control, "AddPinhole", [
        ("RemoteHost", ""), ("RemotePort", "0"), ("InternalClient", address),
        ("InternalPort", str(port)), ("Protocol", str(TCP)), ("LeaseTime", str(lease_s))],
        timeout_s)
    return unique_id(out)


async def update_pinhole(control: Control, uid: int, lease_s: int, timeout_s: float) -> None:
    """A new lease of ``lease_s`` for the pinhole ``uid``."""
    await call(control, "UpdatePinhole", [("UniqueID", str(uid)),
                                          ("NewLeaseTime", str(lease_s))], timeout_s)


async def delete_pinhole(control: Control, uid: int, timeout_s: float) -> None:
    """Close the pinhole ``uid``."""
    await call(control, "DeletePinhole", [("UniqueID", str(uid))], timeout_s)
