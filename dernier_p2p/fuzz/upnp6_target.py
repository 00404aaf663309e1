"""The ``upnp6`` fuzz target: a hostile IGDv2 router's answers to the IPv6 pinhole client.

A case is one answer as :mod:`dernier_p2p.net.upnp6` reads it, built from what a real IGDv2
router sends (UPnP Device Architecture 1.1/2.0, WANIPv6FirewallControl:1) and changed:

* ``search``: an SSDP ``200 OK`` (CACHE-CONTROL, EXT, LOCATION, SERVER, ST, USN, OPT, 01-NLS,
  BOOTID/CONFIGID) with headers duplicated, dropped, huge, folded, out of case, cut at LF,
  non-ASCII; a LOCATION at a link-local, loopback, multicast, unspecified, IPv4-mapped,
  ULA, zone-scoped or foreign address, an IPv4 or a name, a port of 0, 65536, 99999, -1 or
  none, a long or non-ASCII path; read by ``read_search_reply`` from a source and the default
  routers as ``discover`` has them (link-local, global, with a zone, or junk);
* ``description``: the HTTP answer carrying a device description (an
  InternetGatewayDevice:2, a WANDevice:2 in it, a WANConnectionDevice:2 in that, with
  WANIPConnection:2 and WANIPv6FirewallControl:1) with the control URL absolute, relative,
  empty, long, non-ASCII, in CDATA or character references, the service duplicated or
  missing, elements nested 40 to 20,000 deep, a DOCTYPE with entities (billion laughs,
  quadratic blowup, external and parameter entities), another encoding declared or used
  (UTF-16 with and without a BOM, names no codec knows or that are not text codecs),
  unbound prefixes, comments and processing instructions, the text cut short; read by
  ``read_http`` then ``read_description``;
* ``soap``: the HTTP answer to AddPinhole, UpdatePinhole or DeletePinhole, or a SOAP fault
  with a UPnPError (606, 701 to 706, and codes that are not numbers or too long), with the
  UniqueID out of range, negative, hexadecimal, in other digits, padded or missing; read by
  ``read_http``, ``read_soap`` and (AddPinhole) ``unique_id``.

The HTTP framing is changed alike (status lines, Content-Length missing, short, long,
conflicting or not a number, chunked bodies, hundreds of headers, an 8 KiB header, LF line
ends, the body cut), and a third of the cases have their bytes mutated too.

A case passes if the parsers return a result their checks allow or raise
:class:`~dernier_p2p.net.pinhole.PinholeError` (:class:`~dernier_p2p.net.pinhole.Refused`
included) with a printable message of at most 400 characters. Anything else is a crash: any
other exception, a DOCTYPE or entity declaration accepted (:class:`EntityAccepted`, found by
looking for one in the bytes read as UTF-8, UTF-16 or UTF-32), a result outside the checks
(:class:`BadResult`), or a case over its budget (:class:`OverBudget`: more than
:data:`CPU_BUDGET_S` of CPU or :data:`MEMORY_BUDGET` bytes at its peak above what was traced
by ``tracemalloc`` when it began).
"""

from __future__ import annotations

import ipaddress
import random
import re
import time
import tracemalloc
from typing import Any

import msgpack

from dernier_p2p.fuzz.mutate import mutate_bytes
from dernier_p2p.net import upnp6
from dernier_p2p.net.pinhole import PinholeError

SERVICE = upnp6.SERVICE
CPU_BUDGET_S = 0.5  # of CPU time a case may take (the largest honest answer takes ~1 ms)
MEMORY_BUDGET = 8 << 20  # bytes a case may allocate at its peak (a 64 KiB answer: ~1 MiB)
ROUTER = "2001:db8:10::1"
UUID = "uuid:5d3b1a0e-7c2f-4a61-9f0e-2b8c4d6e1a77"


class EntityAccepted(Exception):
    """A parser accepted XML that declares a DOCTYPE or an entity."""


class BadResult(Exception):
    """A parser returned something its checks should have refused."""


class OverBudget(Exception):
    """A case took more CPU time or memory than its budget."""


class UnclearError(Exception):
    """A refusal whose message is not printable or too long to show."""


# ----------------------------------------------------------------------------- the seeds
def search_headers(location: str = f"http://[{ROUTER}]:5000/rootDesc.xml") -> list[list[str]]:
    """The headers of an IGDv2 router's SSDP answer to a search for the firewall control."""
    return [["CACHE-CONTROL", "max-age=1800"], ["DATE", "Sat, 28 Nov 2026 18:00:00 GMT"],
            ["EXT", ""], ["LOCATION", location],
            ["OPT", '"http://schemas.upnp.org/upnp/1/0/"; ns=01'], ["01-NLS", "1"],
            ["SERVER", "Linux/5.10 UPnP/2.0 MiniUPnPd/2.3.4"], ["ST", SERVICE],
            ["USN", f"{UUID}::{SERVICE}"], ["BOOTID.UPNP.ORG", "7"],
            ["CONFIGID.UPNP.ORG", "1337"]]


def _service(kind: str, name: str, control: str) -> str:
    return (f"<service><serviceType>{kind}</serviceType>"
            f"<serviceId>urn:upnp-org:serviceId:{name}</serviceId>"
            f"<SCPDURL>/{name}.xml</SCPDURL><controlURL>{control}</controlURL>"
            f"<eventSubURL>/evt/{name}</eventSubURL></service>")


def description(control: str = "/ctl/IP6FCtl", firewall_type: str = SERVICE,
                extra_services: str = "", head: str = '<?xml version="1.0"?>\n',
                inside: str = "") -> str:
    """An IGDv2 device description: the firewall control in the WANConnectionDevice inside
    the WANDevice inside the InternetGatewayDevice (``inside`` goes before its friendlyName,
    ``extra_services`` after the firewall control)."""
    up = "urn:schemas-upnp-org"
    return (f'{head}<root xmlns="{up}:device-1-0" configId="1337">'
            "<specVersion><major>2</major><minor>0</minor></specVersion>"
            f"<device><deviceType>{up}:device:InternetGatewayDevice:2</deviceType>"
            f"{inside}<friendlyName>home router</friendlyName><manufacturer>x</manufacturer>"
            f"<modelName>r</modelName><UDN>{UUID}</UDN><serviceList>"
            + _service(f"{up}:service:Layer3Forwarding:1", "L3Forwarding1", "/ctl/L3F")
            + "</serviceList><deviceList><device>"
            f"<deviceType>{up}:device:WANDevice:2</deviceType><friendlyName>WAN</friendlyName>"
            f"<UDN>{UUID[:-2]}01</UDN><serviceList>"
            + _service(f"{up}:service:WANCommonInterfaceConfig:1", "WANCommonIFC1", "/ctl/CmnIf")
            + "</serviceList><deviceList><device>"
            f"<deviceType>{up}:device:WANConnectionDevice:2</deviceType>"
            f"<friendlyName>WAN connection</friendlyName><UDN>{UUID[:-2]}02</UDN><serviceList>"
            + _service(f"{up}:service:WANIPConnection:2", "WANIPConn1", "/ctl/IPConn")
            + _service(firewall_type, "WANIPv6Firewall1", control) + extra_services
            + "</serviceList></device></deviceList></device></deviceList>"
            f"<presentationURL>http://[{ROUTER}]/</presentationURL></device></root>\n")


ACTIONS = {
    "AddPinhole": {"UniqueID": "12"},
    "UpdatePinhole": {},
    "DeletePinhole": {},
}
FAULTS = {606: "Action not authorized", 701: "PinholeSpaceExhausted", 702: "FirewallDisabled",
          703: "InboundPinholeNotAllowed", 704: "NoSuchEntry", 705: "ProtocolNotSupported",
          706: "InternalPortWildcardingNotAllowed", 401: "Invalid Action",
          402: "Invalid Args", 501: "Action Failed"}
ENVELOPE = ('<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/'
            'envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">'
            "<s:Body>{}</s:Body></s:Envelope>\r\n")


def soap_response(action: str, out: dict[str, str]) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in out.items())
    return ENVELOPE.format(f'<u:{action}Response xmlns:u="{SERVICE}">{inner}'
                           f"</u:{action}Response>")


def soap_fault(code: str, what: str) -> str:
    return ENVELOPE.format(
        "<s:Fault><faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail>"
        '<UPnPError xmlns="urn:schemas-upnp-org:control-1-0">'
        f"<errorCode>{code}</errorCode><errorDescription>{what}</errorDescription>"
        "</UPnPError></detail></s:Fault>")


def http(body: bytes, status: str = "200 OK", extra: list[list[str]] | None = None,
         length: bool = True) -> tuple[str, list[list[str]], bytes]:
    """An HTTP/1.1 answer as (status line, headers, body)."""
    headers = [["CONTENT-TYPE", 'text/xml; charset="utf-8"'], ["CONNECTION", "close"],
               ["SERVER", "Linux/5.10 UPnP/2.0 MiniUPnPd/2.3.4"], ["EXT", ""]]
    if length:
        headers.append(["CONTENT-LENGTH", str(len(body))])
    return f"HTTP/1.1 {status}", headers + (extra or []), body


def join(start: str, headers: list[list[str]], body: bytes, eol: str = "\r\n") -> bytes:
    head = eol.join([start, *(f"{n}: {v}" if v is not None else n for n, v in headers)])
    return head.encode("utf-8", "surrogateescape") + (eol * 2).encode() + body


# ----------------------------------------------------------------------------- the changes
HOSTS = ["fe80::1", ROUTER, "2001:db8:10::abcd", "2001:db8:99::1", "::1", "::", "ff02::c",
         "ff02::1", "::ffff:192.168.1.1", "fd00:10::1", "fec0::1", "fe80::1%25eth0",
         "fe80::1%eth0", "2001:DB8:10:0:0:0:0:1", "2001:db8:10::1:2:3:4:5:6", "1.2.3.4",
         "router.local", "", ":::", "2001:db8:10::g", "٢٠٠١::1", "fe80::1]:80/x[", "0::0:1"]
PORTS = ["5000", "0", "1", "65535", "65536", "99999", "-1", "", "080", "5000a", "00000",
         "123456", "٥٠٠٠", " 5000"]
PATHS = ["/rootDesc.xml", "/", "", "rootDesc.xml", "/" + "r" * 300, "/" + "r" * 255,
         "/é.xml", "/a b", "/a\tb", "//evil/x", "/../../etc/passwd", "/%00", "/x?y=1#z"]
CONTROLS = ["/ctl/IP6FCtl", f"http://[{ROUTER}]:5000/ctl/IP6FCtl", "http://[::1]:1/c",
            "http://evil.example/ctl", "http://x", "ctl/IP6FCtl", "../ctl", "", "   ",
            "/ctl/IP6 FCtl", "/" + "c" * 300, "/" + "c" * 255, "/ctl/é", "&#47;ctl&#47;x",
            "<![CDATA[/ctl/IP6FCtl]]>", "/ctl/<!-- c -->IP6FCtl", "/ctl/&amp;x", "&#x85;/x",
            "/ctl/&#0;", "/ctl/&#x1b;[2J", "/ctl/&unknown;", "ftp://x/y", "HTTP://[::1]/x",
            "/ctl/\x7f", "/ctl/<b>x</b>", "\n/ctl/IP6FCtl\n"]
FIREWALL_TYPES = [SERVICE, SERVICE + " ", SERVICE.lower(), SERVICE[:-1] + "2",
                  "urn:schemas-upnp-org:service:WANIPv6FirewallControl", "", SERVICE + "\x00"]
ENCODINGS = ["bogus", "utf-7", "UTF-16", "utf-32", "idna", "rot13", "base64", "hex", "zlib",
             "undefined", "mbcs", "punycode", "shift_jis", "latin-1", "us-ascii", "cp037",
             "utf-8-sig", "palmos", "x" * 300, ""]
UNIQUE_IDS = ["12", "0", "65535", "65536", "-1", "1e3", " 12 ", "0x10", "", "٣", "99999999999",
              "12\x1b", "+5", "00012", "1" * 5000, "12.0", "&#49;2"]
ERROR_CODES = ["606", "702", "703", "", "x", "-1", "4294967296", "6" * 200, "606\x1b[2J",
               "&#x1b;[31m", "<a>606</a>", "  703  ", "٦٠٦", "1e3", "0", "606\u202e",
               "&#x85;606", "606&#x2028;x", "\u200b"]
STATUS_LINES = ["HTTP/1.1 200 OK", "HTTP/1.0 200 OK", "HTTP/1.1 200", "HTTP/1.1 404 Not Found",
                "HTTP/1.1 500 Internal Server Error", "HTTP/2 200", "HTTP/1.1 2000 OK",
                "HTTP/1.1 20 OK", "http/1.1 200 ok", "HTTP/1.1 200 OK\x00",
                "HTTP/1.1 100 Continue", "HTTP/1.1 200 Ö", "HTTP/1.1 200 OK " + "x" * 5000,
                "HTTP/1.1 ٢٠٠ OK", "HTTP/1.1 999 Z", "HTTP/1.1 000 Z", ""]
LENGTHS = ["abc", "-5", "1e3", " 5", "0x10", str(2**64), "99999", "٣", "+5", "", "5, 5",
           "00000000000000000001"]
# (where, source, near): what discover has when an answer comes
CONTEXTS = [("fe80::1", ["fe80::1"]), (ROUTER, ["fe80::1"]), ("fe80::1%2", ["fe80::1"]),
            ("fe80::2", ["2001:db8:10::abcd"]), ("fd00:10::1", ["fd00:10::2"]),
            ("2001:db8:10::1", []), ("", ["not an address", ""]), ("::ffff:10.0.0.1", [])]


def _doctype(rng: random.Random, use: str) -> tuple[str, str]:
    """A DOCTYPE with entities and a reference to them: (declaration, reference)."""
    kind = rng.randrange(6)
    if kind == 0:  # billion laughs
        levels = ["<!ENTITY l0 \"lol\">"] + [
            f"<!ENTITY l{i} \"{f'&l{i - 1};' * 10}\">" for i in range(1, 10)]
        return f"<!DOCTYPE root [{''.join(levels)}]>", "&l9;"
    if kind == 1:  # quadratic blowup
        return f"<!DOCTYPE root [<!ENTITY a \"{'a' * 30000}\">]>", "&a;" * 2000
    if kind == 2:
        return '<!DOCTYPE root [<!ENTITY e SYSTEM "file:///etc/passwd">]>', "&e;"
    if kind == 3:
        return ('<!DOCTYPE root [<!ENTITY % p "<!ENTITY e \'/ctl/x\'>"> %p;]>', "&e;")
    if kind == 4:
        return '<!DOCTYPE root SYSTEM "http://[::1]:1/x.dtd">', use
    return f'<!DOCTYPE root [<!ENTITY e "{use}">]>', "&e;"


def _change_description(rng: random.Random) -> bytes:
    """A device description, changed in one to three ways."""
    args: dict[str, Any] = {}
    encoding: str | None = None
    bom = b""
    cut = False
    doc: tuple[str, str] | None = None
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(12)
        if how == 0:
            args["control"] = rng.choice(CONTROLS)
        elif how == 1:
            args["firewall_type"] = rng.choice(FIREWALL_TYPES)
        elif how == 2:  # the service duplicated, or many services
            n = rng.choice([1, 2, 200])
            args["extra_services"] = _service(SERVICE, "Dup", rng.choice(CONTROLS)) * n
        elif how == 3:
            depth = rng.choice([40, 1000, 9000, 20000])  # (9,000: the most 64 KiB holds)
            args["inside"] = "<a>" * depth + "x" + "</a>" * depth
        elif how == 4:
            doc = _doctype(rng, args.get("control", "/ctl/IP6FCtl"))
            if rng.random() < 0.4:  # where a look for "<!DOCTYPE" in the bytes misses it
                encoding = rng.choice(["utf-16", "utf-16-le", "utf-16-be"])
        elif how == 5:
            name = rng.choice(ENCODINGS)
            args["head"] = f'<?xml version="1.0" encoding="{name}"?>\n'
            if name.upper() in ("UTF-16", "UTF-32") and rng.random() < 0.5:
                encoding = name
        elif how == 6:
            encoding = rng.choice(["utf-16", "utf-16-le", "utf-16-be"])
            bom = b"" if encoding == "utf-16" else rng.choice([b"", b"\xff\xfe", b"\xfe\xff"])
        elif how == 7:
            bom = rng.choice([b"\xef\xbb\xbf", b"\xef\xbb\xbf" * 2, b"\x00", b" \n"])
        elif how == 8:
            args["inside"] = rng.choice([
                "<!-- a comment -->", "<?pi data?>", "<x:y>1</x:y>", '<a ' + " ".join(
                    f'a{i}="{i}"' for i in range(2000)) + "/>", '<a b="1" b="2"/>',
                "<a>" + "&amp;" * 5000 + "</a>", "<a>" + "&#x10FFFF;" * 3000 + "</a>",
                "<a>\x00</a>", "<a>\udcff</a>", "]]>"])
        elif how == 9:
            args["head"] = rng.choice(["", '<?xml version="1.1"?>', '<?xml version="2.0"?>',
                                       "\n\n" + '<?xml version="1.0"?>', "x" * 70000])
        elif how == 10:
            cut = True
        else:
            args["extra_services"] = rng.choice([
                "<service>" * rng.choice([2, 300]),
                f"<service><serviceType>{SERVICE}</serviceType></service>",
                f"<service><serviceType>{SERVICE}</serviceType><controlURL/>"
                "<controlURL>/b</controlURL></service>",
                f"<service><serviceType>{SERVICE}</serviceType><controlURL>/c<i>/x</i>"
                "</controlURL></service>"])
    text = description(**args)
    if doc is not None:
        decl, ref = doc
        head = args.get("head", '<?xml version="1.0"?>\n')
        control = args.get("control", "/ctl/IP6FCtl")
        text = text.replace(head, head + decl, 1).replace(
            f"<controlURL>{control}</controlURL>", f"<controlURL>{ref}</controlURL>", 1)
    data = text.encode(encoding or "utf-8", "surrogateescape" if encoding is None
                       else "surrogatepass")
    data = bom + data
    if cut:
        data = data[: rng.randrange(len(data) + 1)]
    return data


def _change_search(rng: random.Random) -> bytes:
    """An SSDP answer, changed in one to three ways."""
    start = "HTTP/1.1 200 OK"
    host, port, path = ROUTER, "5000", "/rootDesc.xml"
    headers = search_headers()
    eol = "\r\n"
    tail = ""
    for _ in range(rng.randint(1, 3)):
        how = rng.randrange(11)
        if how == 0:
            host = rng.choice(HOSTS)
        elif how == 1:
            port = rng.choice(PORTS)
        elif how == 2:
            path = rng.choice(PATHS)
        elif how == 3:  # a header duplicated (the first is the one read), or dropped
            i = rng.randrange(len(headers))
            if rng.random() < 0.5:
                headers.insert(rng.randrange(len(headers) + 1), [headers[i][0], rng.choice(
                    ["http://[2001:db8:99::1]:1/x", "", SERVICE + "x", "upnp:rootdevice"])])
            else:
                del headers[i]
        elif how == 4:
            headers.append([rng.choice(["X-BIG", "SERVER", "LOCATION"]), "x" * rng.choice(
                [100, 1500, 3000])])
        elif how == 5:
            headers += [[f"X-{i}", "1"] for i in range(rng.choice([50, 300]))]
        elif how == 6:
            i = rng.randrange(len(headers))
            name, value = headers[i][0], headers[i][1] or ""
            headers[i] = rng.choice([[name.lower(), value], [name + " ", value],
                                     [" " + name, value], [name + ":" + value, None],
                                     [name, value + "\r\n continued"], [name, value + "é"],
                                     [name, value + "\udcff"], ["", value], [name, None]])
        elif how == 7:
            eol = rng.choice(["\n", "\r", "\r\r\n"])
        elif how == 8:
            start = rng.choice(STATUS_LINES)
        elif how == 9:
            tail = rng.choice(["x" * 3000, "\r\n", "body", "\xff"])
        else:
            headers.append(["ST", "ssdp:all"] if rng.random() < 0.5 else ["ST", SERVICE])
    location = f"http://[{host}]:{port}{path}" if rng.random() < 0.95 else \
        rng.choice([f"http://{host}:{port}{path}", f"https://[{host}]:{port}{path}",
                    f"http://[{host}]{path}", f"HTTP://[{host}]:{port}{path}"])
    headers = [[n, location] if n == "LOCATION" and v == search_headers()[3][1] else [n, v]
               for n, v in headers]
    return join(start, headers, tail.encode("utf-8", "surrogateescape"), eol)


def _change_soap(rng: random.Random, action: str) -> tuple[str, bytes]:
    """A SOAP answer to ``action`` (an HTTP status and body), changed or not."""
    out = dict(ACTIONS[action])
    roll = rng.random()
    if roll < 0.35:
        code = rng.choice(list(FAULTS))
        return "500 Internal Server Error", soap_fault(str(code), FAULTS[code]).encode()
    if roll < 0.5:
        code = rng.choice(ERROR_CODES)
        what = rng.choice(["x", "", "y" * 2000, "\x1b[2J", "é", "&lt;b&gt;"])
        return rng.choice(["500 Internal Server Error", "200 OK", "400 Bad Request"]), \
            soap_fault(code, what).encode("utf-8", "surrogateescape")
    if roll < 0.8:
        out["UniqueID"] = rng.choice(UNIQUE_IDS)
        if rng.random() < 0.1:
            del out["UniqueID"]
    if rng.random() < 0.2:
        body = soap_response(rng.choice(list(ACTIONS)), out)
    else:
        body = soap_response(action, out)
    if rng.random() < 0.15:
        body = body.replace("<s:Body>", "<s:Body>" + rng.choice([
            "<a>" * 2000 + "</a>" * 2000, "<x:y/>", "<!-- c -->",
            f'<!DOCTYPE x [<!ENTITY e "{"e" * 1000}">]>']))
    if rng.random() < 0.1:
        doc = _doctype(rng, "12")
        body = body.replace("<?xml version=\"1.0\"?>\r\n", "<?xml version=\"1.0\"?>\r\n"
                            + doc[0]).replace(">12<", f">{doc[1]}<")
    data = body.encode("utf-8", "surrogateescape")
    if rng.random() < 0.05:
        data = body.encode("utf-16")
    return "200 OK", data


def _frame(rng: random.Random, status: str, body: bytes) -> bytes:
    """``body`` in an HTTP answer, its framing changed in a quarter of the cases."""
    start, headers, body = http(body, status)
    eol = "\r\n"
    if rng.random() < 0.75:
        return join(start, headers, body)
    for _ in range(rng.randint(1, 2)):
        how = rng.randrange(9)
        if how == 0:
            start = rng.choice(STATUS_LINES)
        elif how == 1:
            headers = [h for h in headers if h[0] != "CONTENT-LENGTH"]
        elif how == 2:
            headers.append(["CONTENT-LENGTH", str(len(body) + rng.choice([1, -1, 100, -100]))])
            headers = headers[-1:] + headers[:-1]
        elif how == 3:
            headers.append(["Content-Length", rng.choice(LENGTHS + [str(len(body))] * 3)])
            if rng.random() < 0.5:
                headers = headers[-1:] + headers[:-1]
        elif how == 4:  # chunked
            cut = max(1, len(body) // 2)
            body = (b"%x\r\n" % cut + body[:cut] + b"\r\n" + b"%x\r\n" % (len(body) - cut)
                    + body[cut:] + b"\r\n0\r\n\r\n")
            headers = [h for h in headers if h[0] != "CONTENT-LENGTH" or rng.random() < 0.3]
            headers.append(["Transfer-Encoding", rng.choice(["chunked", "Chunked",
                                                             "gzip, chunked", "identity"])])
        elif how == 5:
            headers += [[f"X-{i}", "y"] for i in range(rng.choice([100, 1000]))]
        elif how == 6:
            headers.append(["X-BIG", "z" * 8192])
        elif how == 7:
            eol = rng.choice(["\n", "\r"])
        else:
            body = body[: rng.randrange(len(body) + 1)]
    return join(start, headers, body, eol)


ACTION_NAMES = list(ACTIONS)


def make(rng: random.Random) -> dict[str, Any]:
    """One case: an answer of a kind, with what discover knows when it reads it."""
    roll = rng.random()
    source, near = rng.choice(CONTEXTS)
    case: dict[str, Any] = {"source": source, "near": near, "base": "/rootDesc.xml",
                            "action": "AddPinhole"}
    if roll < 0.3:
        case["kind"] = "search"
        data = _change_search(rng) if rng.random() < 0.8 else join(
            "HTTP/1.1 200 OK", search_headers(), b"")
        case["source"], case["near"] = rng.choice(CONTEXTS[:5] + [(ROUTER, [])])
    elif roll < 0.65:
        case["kind"] = "description"
        case["base"] = rng.choice(["/rootDesc.xml", "/", "/dev/desc.xml", "", "x"])
        xml = _change_description(rng) if rng.random() < 0.85 else description().encode()
        data = _frame(rng, "200 OK", xml)
    else:
        case["kind"] = "soap"
        case["action"] = rng.choice(ACTION_NAMES)
        status, body = _change_soap(rng, case["action"])
        data = _frame(rng, status, body)
    if rng.random() < 0.3:
        data = _mutate(data, rng)
    case["data"] = data
    return case


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """Byte changes: the generic ones, or one of the text's delimiters or digits changed."""
    if rng.random() < 0.6:
        return mutate_bytes(data, rng)
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        marks = [i for i, c in enumerate(b[:4096]) if c in b"<>/:\r\n&;\"=0123456789[]"]
        if not marks:
            break
        i = rng.choice(marks)
        b[i:i + 1] = rng.choice([b"", b"\x00", b"\xff", b"<", b">", b"&", b"\xc3\xa9", b"9" * 7,
                                 b"\r\n", bytes(b[i:i + 1]) * 2])
    return bytes(b)


# ----------------------------------------------------------------------------- the run
_DECLARES = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def declares_entities(data: bytes) -> bool:
    """Whether ``data`` read as UTF-8, UTF-16 or UTF-32 (either byte order, any alignment)
    holds a DOCTYPE or an entity declaration."""
    for codec, width in (("utf-8", 1), ("utf-16-le", 2), ("utf-16-be", 2), ("utf-32-le", 4),
                         ("utf-32-be", 4)):
        for skip in range(width):
            if _DECLARES.search(data[skip:].decode(codec, "ignore")):
                return True
    return False


def _near(host: str, source: str, near: list[str]) -> bool:
    ip = ipaddress.IPv6Address(host)
    for other in (source, *near):
        try:
            them = ipaddress.IPv6Address(other.split("%")[0])
        except ValueError:
            continue
        if ip == them or (ip.exploded[:19] == them.exploded[:19] and not ip.is_link_local):
            return True
    return False


def _chunks(rest: bytes) -> bytes | None:
    """The data of a chunked body, read as RFC 9112 7.1 writes it (None where it is not one)."""
    out = b""
    while True:
        line, sep, rest = rest.partition(b"\r\n")
        size = line.split(b";")[0].strip(b" \t")
        if not sep or not re.fullmatch(rb"[0-9a-fA-F]{1,6}", size):
            return None
        if int(size, 16) == 0:
            return out
        data, rest = rest[:int(size, 16)], rest[int(size, 16):]
        if len(data) < int(size, 16) or not rest.startswith(b"\r\n"):
            return None
        out, rest = out + data, rest[2:]


def _check_framing(data: bytes, status: int, body: bytes) -> None:
    """What an HTTP answer read must be (RFC 9112): a status of 100 to 599; in the chunked
    transfer coding (no other, no Content-Length with it) the chunks' data joined; else every
    Content-Length alike and the body that long."""
    head, _, rest = data.partition(b"\r\n\r\n")
    fields = [line.partition(b":") for line in head.split(b"\r\n")[1:]]
    lengths = {v.strip() for k, _, v in fields if k.lower() == b"content-length"}
    coding = b",".join(v for k, _, v in fields if k.lower() == b"transfer-encoding")
    codings = [c.strip().lower() for c in coding.split(b",") if c.strip() != b"identity"]
    if coding:
        framed = not lengths and codings == [b"chunked"] and _chunks(rest) == body
    else:
        framed = len(lengths) <= 1 and (not lengths or int(lengths.pop()) == len(body)) \
            and rest.startswith(body)
    if not 100 <= status <= 599 or not framed:
        raise BadResult(f"an HTTP answer read as status {status}, {len(body)} bytes of body")


def _parse(case: dict[str, Any]) -> None:
    """What discover and call do with the answer."""
    data, kind = case["data"], case["kind"]
    if kind == "search":
        host, port, path = upnp6.read_search_reply(data, case["source"], case["near"])
        if not (_near(host, case["source"], case["near"]) and 0 < port < 65536
                and re.fullmatch(r"/[!-~]{0,255}", path)):
            raise BadResult(f"an SSDP answer read as {(host, port, path)!r}")
        return
    if kind == "description":
        status, xml = upnp6.read_http(data, upnp6.MAX_DESCRIPTION)
        _check_framing(data, status, xml)
        if status != 200:
            raise PinholeError(f"the description answered HTTP {status}")
        control = upnp6.read_description(xml, case["base"])
        if not re.fullmatch(r"/[!-~]{0,255}", control):
            raise BadResult(f"a control path read as {control!r}")
        if declares_entities(xml):
            raise EntityAccepted("a description with a DOCTYPE or an entity was read")
        return
    status, body = upnp6.read_http(data, upnp6.MAX_SOAP_REPLY)
    _check_framing(data, status, body)
    out = upnp6.read_soap(case["action"], status, body)
    if declares_entities(body):
        raise EntityAccepted("a SOAP answer with a DOCTYPE or an entity was read")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in out.items()):
        raise BadResult(f"SOAP output {out!r}")
    if case["action"] == "AddPinhole":
        uid = upnp6.unique_id(out)
        if not 0 <= uid <= 65535 or type(uid) is not int:
            raise BadResult(f"UniqueID {uid!r}")


_tracing = False  # whether run() started tracemalloc (stopped by close())


def run(case: dict[str, Any]) -> None:
    """Read the case; :class:`PinholeError` with a clear message passes, within budget.
    Memory is traced from the first case to :func:`close` (started and stopped for each
    case, tracemalloc's own tables grew the process by about 1 MiB a thousand cases)."""
    global _tracing
    if not tracemalloc.is_tracing():
        tracemalloc.start()
        _tracing = True
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    cpu = time.process_time()
    try:
        _parse(case)
    except PinholeError as exc:
        text = str(exc)
        if not text.isprintable() or len(text) > 400:
            raise UnclearError(f"a refusal that cannot be shown: {text[:200]!r}") from None
        raise
    finally:
        took = time.process_time() - cpu
        peak = tracemalloc.get_traced_memory()[1] - base
        if took > CPU_BUDGET_S or peak > MEMORY_BUDGET:
            raise OverBudget(f"{took * 1000:.0f} ms of CPU, {peak >> 10} KiB at the peak")


def close() -> None:
    """Stop the tracing :func:`run` started."""
    global _tracing
    if _tracing:
        tracemalloc.stop()
        _tracing = False


def reason(exc: BaseException) -> str:
    """A refusal's reason without the values it names (for the counts by reason)."""
    text = re.sub(r" \((?:[^()]|\([^()]*\))*\)", "", str(exc))  # (expat's words, a status)
    return re.sub(r"(?<!\w)'[^']*'|\"[^\"]*\"|[0-9a-f:.]*[0-9][0-9a-f:.]*", "N", text)[:70]


def dump(case: dict[str, Any]) -> bytes:
    return msgpack.packb(case, use_bin_type=True)
