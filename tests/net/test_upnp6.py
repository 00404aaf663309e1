"""UPnP IGDv2 IPv6 pinholes (WANIPv6FirewallControl): the bytes asked, and every byte of the
router's answers judged (sizes, syntax, addresses), over loopback for the SOAP exchange."""

from __future__ import annotations

import ipaddress
import random
import socket
import tracemalloc
from functools import partial

import pytest
import trio

from dernier_p2p.fuzz.mutate import mutate_bytes
from dernier_p2p.net import upnp6
from dernier_p2p.net.pinhole import PinholeError, Refused

ROUTER = "2a11:2233:10::1"
REPLY = ("HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\n"
         f"ST: {upnp6.SERVICE}\r\n"
         f"LOCATION: http://[{ROUTER}]:36743/rootDesc.xml\r\n\r\n").encode()
DESCRIPTION = f"""<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0"><device><serviceList>
<service><serviceType>urn:schemas-upnp-org:service:WANIPConnection:2</serviceType>
<controlURL>/ctl/IPConn</controlURL></service>
<service><serviceType>{upnp6.SERVICE}</serviceType>
<controlURL>/ctl/IP6FCtl</controlURL></service>
</serviceList></device></root>""".encode()


def test_the_search_asks_for_the_ipv6_firewall_control_at_the_ssdp_group() -> None:
    request = upnp6.search_request().decode()
    assert request.startswith("M-SEARCH * HTTP/1.1\r\nHOST: [FF02::C]:1900\r\n")
    assert f"ST: {upnp6.SERVICE}\r\n" in request and request.endswith("\r\n\r\n")


def test_a_search_reply_names_the_routers_description() -> None:
    assert upnp6.read_search_reply(REPLY, "fe80::1", [ROUTER]) == (ROUTER, 36743,
                                                                    "/rootDesc.xml")
    # the router's own address answering, or another of its /64 (its LAN address)
    assert upnp6.read_search_reply(REPLY, ROUTER, [])[0] == ROUTER
    assert upnp6.read_search_reply(REPLY, "fe80::1", ["2a11:2233:10::abcd"])[0] == ROUTER


@pytest.mark.parametrize("data,why", [
    (REPLY + b"x" * 2048, "above 2048 bytes"),
    (b"\xff" + REPLY, "not ASCII"),
    (REPLY.replace(b"200 OK", b"404 Not Found"), "not `HTTP/1.1 200`"),
    (REPLY.replace(b"WANIPv6FirewallControl", b"WANIPConnection"), "another service"),
    (REPLY.replace(f"[{ROUTER}]".encode(), b"192.168.10.1"), "not http://[IPv6]:port/path"),
    (REPLY.replace(f"[{ROUTER}]".encode(), b"[::ffff:1.2.3.4.5]"), "not IPv6"),
    (REPLY.replace(b"36743", b"99999"), "a bad port"),
    (REPLY.replace(b"rootDesc.xml", b"r" * 300), "above 256"),
    (REPLY.replace(ROUTER.encode(), b"2001:db8::66"), "not the router that answered"),
    (REPLY.replace(b"LOCATION:", b"LOCATION"), "not `name: value`"),
    (REPLY.replace(b"EXT", b"E(T") if b"EXT" in REPLY else REPLY.replace(b"ST:", b"S(T:"),
     "not `name: value`"),
])
def test_a_search_reply_that_is_not_usable_is_refused_saying_why(data: bytes, why: str) -> None:
    with pytest.raises(PinholeError, match=why.replace("[", r"\[").replace("]", r"\]")):
        upnp6.read_search_reply(data, "fe80::1", [ROUTER])


def test_the_description_names_the_control_path_of_the_ipv6_firewall_service() -> None:
    assert upnp6.read_description(DESCRIPTION) == "/ctl/IP6FCtl"
    absolute = DESCRIPTION.replace(b"<controlURL>/ctl/IP6FCtl",
                                   f"<controlURL>http://[{ROUTER}]:1/c6".encode())
    assert upnp6.read_description(absolute) == "/c6"  # the host is the description's own
    relative = DESCRIPTION.replace(b"<controlURL>/ctl/IP6FCtl", b"<controlURL>ctl/6")
    assert upnp6.read_description(relative, "/dev/rootDesc.xml") == "/dev/ctl/6"


@pytest.mark.parametrize("xml,why", [
    (DESCRIPTION + b" " * 65536, "above 64 KiB"),
    (b'<!DOCTYPE r [<!ENTITY a "aaaa">]><root>&a;</root>', "DOCTYPE"),
    (b"<root><device>", "not XML"),
    (DESCRIPTION.replace(b"WANIPv6FirewallControl", b"WANIPv6Other"), "offers no IPv6"),
    (DESCRIPTION.replace(b"/ctl/IP6FCtl", b"ctl IP6"), "not a path"),
    (DESCRIPTION.replace(b"/ctl/IP6FCtl", b"/" + b"c" * 300), "not a path"),
])
def test_a_description_that_is_not_usable_is_refused_saying_why(xml: bytes, why: str) -> None:
    with pytest.raises(PinholeError, match=why):
        upnp6.read_description(xml)


@pytest.mark.parametrize("name", ["bogus", "zlib", "base64", "rot13", "idna", "punycode",
                                  "undefined", "mbcs", "utf-32", "shift_jis", "x" * 300])
def test_a_description_is_read_as_utf8_whatever_encoding_it_declares(name: str) -> None:
    # (the XML parser used to look the declared name up as a Python codec: LookupError,
    # ValueError or UnicodeError escaped, and a codec could read the bytes as it pleased)
    xml = DESCRIPTION.replace(b'<?xml version="1.0"?>',
                              f'<?xml version="1.0" encoding="{name}"?>'.encode())
    assert upnp6.read_description(xml) == "/ctl/IP6FCtl"
    with pytest.raises(PinholeError, match="not XML"):  # and bytes that are not UTF-8 are not
        upnp6.read_description(xml.replace(b"<device>", b"<device>\x80\xff"))


BILLION_LAUGHS = ("<!DOCTYPE root [<!ENTITY l0 'lol'>" + "".join(
    f"<!ENTITY l{i} '{f'&l{i - 1};' * 10}'>" for i in range(1, 10)) + "]>")


@pytest.mark.parametrize("declaration,use", [
    ("<!DOCTYPE root [<!ENTITY e '/ctl/x'>]>", "&e;"),
    (BILLION_LAUGHS, "&l9;"),
    (f"<!DOCTYPE root [<!ENTITY a '{'a' * 20000}'>]>", "&a;" * 1000),
    ("<!DOCTYPE root [<!ENTITY e SYSTEM 'file:///etc/passwd'>]>", "&e;"),
])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8"])
def test_a_doctype_is_refused_in_any_encoding_before_an_entity_is_expanded(
        declaration: str, use: str, encoding: str) -> None:
    # (a look for b"<!DOCTYPE" in the bytes missed it in UTF-16: the entities were expanded,
    # up to expat's own limit, 66 MiB and half a second for these 20 KiB)
    text = DESCRIPTION.decode().replace('<?xml version="1.0"?>\n',
                                        f'<?xml version="1.0" encoding="UTF-16"?>{declaration}')
    xml = text.replace("/ctl/IP6FCtl", use).encode(encoding)
    tracemalloc.start()
    try:
        with pytest.raises(PinholeError, match="DOCTYPE"):
            upnp6.read_description(xml)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    body = _answer("AddPinhole", ADDED).partition(b"\r\n\r\n")[2].decode()
    body = body.replace("?>", f"?>{declaration}", 1).replace(">12<", f">{use}<")
    with pytest.raises(PinholeError, match="DOCTYPE"):
        upnp6.read_soap("AddPinhole", 200, body.encode(encoding))


def test_elements_nested_deeper_than_a_description_needs_are_refused() -> None:
    nested = DESCRIPTION.replace(b"<device>", b"<device>" + b"<a>" * 40 + b"</a>" * 40, 1)
    with pytest.raises(PinholeError, match="nested deeper than 32"):
        upnp6.read_description(nested)
    deep = _answer("AddPinhole", "<a>" * 2000 + "</a>" * 2000 + ADDED)
    with pytest.raises(PinholeError, match="nested deeper than 32"):
        upnp6.read_soap("AddPinhole", *upnp6.read_http(deep, upnp6.MAX_SOAP_REPLY))


def test_a_soap_request_is_a_post_of_the_action_with_its_arguments() -> None:
    control = upnp6.Control(ROUTER, 36743, "/ctl/IP6FCtl")
    request = upnp6.soap_request(control, "DeletePinhole", [("UniqueID", "7")])
    head, _, body = request.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /ctl/IP6FCtl HTTP/1.1\r\nHost: [2a11:2233:10::1]:36743\r\n")
    assert f'SOAPAction: "{upnp6.SERVICE}#DeletePinhole"'.encode() in head
    assert f"Content-Length: {len(body)}".encode() in head
    assert b"<UniqueID>7</UniqueID>" in body
    with pytest.raises(ValueError):  # nothing that would need escaping goes in
        upnp6.soap_request(control, "DeletePinhole", [("UniqueID", "<x/>")])


def _answer(action: str, inner: str, status: str = "200 OK") -> bytes:
    body = (f'<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/'
            f'envelope/"><s:Body>{inner.format(action=action)}</s:Body></s:Envelope>').encode()
    return (f"HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {len(body)}"
            "\r\n\r\n").encode() + body


ADDED = '<u:{action}Response xmlns:u="x"><UniqueID>12</UniqueID></u:{action}Response>'
FAULT = ('<s:Fault><detail><UPnPError xmlns="urn:schemas-upnp-org:control-1-0"><errorCode>606'
         '</errorCode><errorDescription>Action not authorized</errorDescription></UPnPError>'
         '</detail></s:Fault>')


def test_an_answer_gives_the_unique_id_or_the_routers_refusal() -> None:
    status, body = upnp6.read_http(_answer("AddPinhole", ADDED), upnp6.MAX_SOAP_REPLY)
    assert upnp6.unique_id(upnp6.read_soap("AddPinhole", status, body)) == 12
    status, body = upnp6.read_http(_answer("AddPinhole", FAULT, "500 Internal Server Error"),
                                   upnp6.MAX_SOAP_REPLY)
    with pytest.raises(Refused, match="refused AddPinhole: error 606 .Action not authorized."):
        upnp6.read_soap("AddPinhole", status, body)


@pytest.mark.parametrize("data,why", [
    (_answer("AddPinhole", ADDED) + b" " * upnp6.MAX_SOAP_REPLY, "above 16384"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", "without the end of its headers"),
    (b"SSH-2.0-x\r\n\r\n", "without a status line"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello",
     "cut short in a chunk"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
     "without its last chunk"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello!\r\n0\r\n\r\n",
     "longer than its size"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nx\r\nhello\r\n0\r\n\r\n",
     "chunk size is not one"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000\r\n",
     "chunk size is not one"),  # (7 hex digits: no chunk that long fits an answer)
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n"
     b"4\r\n<x/>\r\n0\r\n\r\n", "both a Transfer-Encoding and a Content-Length"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n4\r\n<x/>\r\n0\r\n\r\n",
     r"transfer coding not read here \(gzip, chunked\)"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
     "transfer coding not read here"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n<x/>", "not read here .gzip."),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort", "shorter than its Content-Length"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nshort", "Content-Length is not a number"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nshort", "not a number below 100000"),
    (b"HTTP/1.1 200 OK\r\n\xff: 1\r\n\r\n", "not ASCII"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 2\r\n\r\n<x/>",
     "Content-Lengths that differ"),  # (the first was read)
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"4\r\n<x/>\r\n0\r\n\r\n", "not read here"),  # (every Transfer-Encoding is read)
    (b"HTTP/1.1 000 Z\r\n\r\n<x/>", "without a status line"),  # (read as status 0)
    (b"HTTP/1.1 999 Z\r\n\r\n<x/>", "without a status line"),
])
def test_an_http_answer_that_is_not_usable_is_refused_saying_why(data: bytes, why: str) -> None:
    with pytest.raises(PinholeError, match=why):
        upnp6.read_http(data, upnp6.MAX_SOAP_REPLY)


@pytest.mark.parametrize("coding,body", [
    ("chunked", b"4\r\n<x/>\r\n0\r\n\r\n"),
    ("Chunked", b"2\r\n<x\r\n2;name=value\r\n/>\r\n0\r\nX-Trailer: 1\r\n\r\n"),
    ("identity, chunked", b"4 \r\n<x/>\r\n0\r\n"),  # (no final CRLF after the last chunk)
])
def test_a_chunked_answer_is_read_from_its_chunks(coding: str, body: bytes) -> None:
    data = f"HTTP/1.1 200 OK\r\nTransfer-Encoding: {coding}\r\n\r\n".encode() + body
    assert upnp6.read_http(data, upnp6.MAX_SOAP_REPLY) == (200, b"<x/>")


def test_a_chunked_soap_answer_gives_the_pinhole() -> None:
    plain = _answer("AddPinhole", ADDED)
    head, _, body = plain.partition(b"\r\n\r\n")
    head = b"\r\n".join(x for x in head.split(b"\r\n") if not x.lower().startswith(b"content-"))
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                      for i in range(0, len(body), 7))
    data = head + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    status, read = upnp6.read_http(data, upnp6.MAX_SOAP_REPLY)
    assert (status, read) == (200, body)
    assert upnp6.unique_id(upnp6.read_soap("AddPinhole", status, read)) == \
        upnp6.unique_id(upnp6.read_soap("AddPinhole", *upnp6.read_http(plain,
                                                                        upnp6.MAX_SOAP_REPLY)))


@pytest.mark.parametrize("status,body,why", [
    (200, b"not xml", "not XML"),
    (200, b"", "not XML"),
    (200, b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', "DOCTYPE"),
    (200, _answer("DeletePinhole", ADDED).partition(b"\r\n\r\n")[2], "not AddPinholeResponse"),
    (404, b"<x/>", "AddPinhole: HTTP 404"),
    (200, '<?xml version="1.0" encoding="bogus"?><x/>'.encode("utf-16"), "not AddPinhole"),
])
def test_a_soap_answer_that_is_not_usable_is_refused_saying_why(status: int, body: bytes,
                                                                 why: str) -> None:
    with pytest.raises(PinholeError, match=why):
        upnp6.read_soap("AddPinhole", status, body)
    for out in ({}, {"UniqueID": "65536"}, {"UniqueID": "-1"}, {"UniqueID": "1e3"}):
        with pytest.raises(PinholeError, match="UniqueID"):
            upnp6.unique_id(out)


@pytest.mark.parametrize("code", ["606\u202e", "x", "", "1e3", "٦٠٦", "6060606"])
def test_a_fault_whose_error_code_is_not_a_number_is_no_refusal_to_show(code: str) -> None:
    # (it was shown as "refused AddPinhole: error " and the code, whatever it held)
    status, body = upnp6.read_http(_answer("AddPinhole", FAULT.replace(">606<", f">{code}<"),
                                           "500 Internal Server Error"), upnp6.MAX_SOAP_REPLY)
    with pytest.raises(PinholeError) as refusal:
        upnp6.read_soap("AddPinhole", status, body)
    assert str(refusal.value) == "AddPinhole: HTTP 500" and refusal.type is PinholeError


async def _router(answers: list[bytes], asked: list[bytes],
                  task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """A loopback HTTP server answering each request in turn with the next of ``answers``."""
    listener = trio.socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    await listener.bind(("::1", 0))
    listener.listen(4)
    task_status.started(listener.getsockname()[1])
    with listener:
        for answer in answers:
            sock, _ = await listener.accept()
            with sock:
                data = b""
                while b"</s:Envelope>" not in data:
                    data += await sock.recv(4096)
                asked.append(data)
                await sock.send(answer)


async def test_a_pinhole_is_added_renewed_and_deleted_over_soap() -> None:
    asked: list[bytes] = []
    answers = [_answer("AddPinhole", ADDED),
               _answer("UpdatePinhole", "<u:UpdatePinholeResponse xmlns:u='x'/>"),
               _answer("DeletePinhole", "<u:DeletePinholeResponse xmlns:u='x'/>"),
               _answer("AddPinhole", FAULT, "500 Internal Server Error"),
               b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * (upnp6.MAX_SOAP_REPLY + 10)]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(_router, answers, asked))
            control = upnp6.Control("::1", port, "/ctl/IP6FCtl")
            assert await upnp6.add_pinhole(control, "2a11::2", 47630, 3600, 2.0) == 12
            await upnp6.update_pinhole(control, 12, 3600, 2.0)
            await upnp6.delete_pinhole(control, 12, 2.0)
            with pytest.raises(Refused, match="error 606"):
                await upnp6.add_pinhole(control, "2a11::2", 47630, 3600, 2.0)
            with pytest.raises(PinholeError, match="above 16384"):  # read no further
                await upnp6.add_pinhole(control, "2a11::2", 47630, 3600, 2.0)
    assert b"<InternalClient>2a11::2</InternalClient><InternalPort>47630</InternalPort>" \
           b"<Protocol>6</Protocol><LeaseTime>3600</LeaseTime>" in asked[0]
    assert b"<UniqueID>12</UniqueID><NewLeaseTime>3600</NewLeaseTime>" in asked[1]
    assert b"#DeletePinhole" in asked[2] and b"<UniqueID>12</UniqueID>" in asked[2]


async def test_a_router_that_never_answers_costs_the_timeout_and_says_so() -> None:
    listener = trio.socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    await listener.bind(("::1", 0))
    listener.listen(4)  # accepted by the kernel, never answered
    control = upnp6.Control("::1", listener.getsockname()[1], "/c")
    with trio.fail_after(5), pytest.raises(PinholeError, match="no answer in 0.3 s"):
        await upnp6.delete_pinhole(control, 1, 0.3)
    listener.close()
    with pytest.raises(PinholeError, match="no IPv6 default router"):
        await upnp6.discover([], 1.0)


async def test_a_router_that_refuses_the_search_ends_it_at_once() -> None:
    # Nothing listens for SSDP at the router (here ::1): its "port unreachable" comes back
    # on the search sent to it, and discovery ends then, not at its timeout.
    lo = socket.if_nametoindex("lo")
    start = trio.current_time()
    with trio.fail_after(4), pytest.raises(PinholeError, match="SSDP: Connection refused"):
        await upnp6.discover([("::1", lo)], 5.0)
    assert trio.current_time() - start < 1.0


def test_mutated_answers_give_a_checked_result_or_a_pinhole_error_never_anything_else() -> None:
    # 3,000 mutations of each honest answer (flips, inserts, deletes, splices): every parser
    # either returns what its checks allow or raises PinholeError naming the fault.
    rng = random.Random(26)
    soap = _answer("AddPinhole", ADDED)
    fault = _answer("AddPinhole", FAULT, "500 Internal Server Error")
    kept = 0
    for _ in range(3000):
        try:
            host, port, path = upnp6.read_search_reply(mutate_bytes(REPLY, rng), ROUTER, [])
            net = ipaddress.IPv6Network(f"{ROUTER}/64", strict=False)
            assert ipaddress.IPv6Address(host) in net
            assert 0 < port < 65536 and path.startswith("/") and len(path) <= 256
            kept += 1
        except PinholeError:
            pass
        try:
            path = upnp6.read_description(mutate_bytes(DESCRIPTION, rng), "/rootDesc.xml")
            assert path.startswith("/") and path.isprintable() and " " not in path
        except PinholeError:
            pass
        for answer in (soap, fault):
            try:
                status, body = upnp6.read_http(mutate_bytes(answer, rng), upnp6.MAX_SOAP_REPLY)
                assert 100 <= status <= 999
                assert 0 <= upnp6.unique_id(upnp6.read_soap("AddPinhole", status, body)) < 65536
            except PinholeError:
                pass
    assert kept > 0  # some mutations leave a usable answer, and it passes the checks
