"""The ``upnp6`` fuzz target: a hostile IGDv2 router's SSDP answers, device descriptions and
SOAP answers against the IPv6 pinhole client's parsers (:mod:`dernier_p2p.net.upnp6`)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dernier_p2p.fuzz import upnp6_target
from dernier_p2p.fuzz.runner import run
from dernier_p2p.fuzz.targets import Targets
from dernier_p2p.net import upnp6
from dernier_p2p.net.pinhole import PinholeError


def test_a_short_budget_finds_no_crash_and_reaches_every_parser(tmp_path: Path) -> None:
    report = run(Targets().get("upnp6"), cases=400, seconds=60, seed=1, out=tmp_path)
    assert report.crashes == 0 and report.hangs == 0, report.saved
    assert report.cases == 400 and 0 < report.refused < report.cases  # some answers pass
    kinds = " | ".join(report.kinds)
    for reached in ("an SSDP LOCATION", "a device description", "a SOAP answer",
                    "with a DOCTYPE", "refused AddPinhole: error N", "an HTTP answer"):
        assert reached in kinds, report.kinds


def test_the_cases_are_answers_of_each_kind_built_from_an_honest_routers() -> None:
    cases = [upnp6_target.make(random.Random(f"2:{k}")) for k in range(300)]
    assert {c["kind"] for c in cases} == {"search", "description", "soap"}
    assert {c["action"] for c in cases if c["kind"] == "soap"} == set(upnp6_target.ACTIONS)
    honest = upnp6_target.description().encode()
    assert upnp6.read_description(honest) == "/ctl/IP6FCtl"
    search = upnp6_target.join("HTTP/1.1 200 OK", upnp6_target.search_headers(), b"")
    assert upnp6.read_search_reply(search, "fe80::1", [upnp6_target.ROUTER])[1:] == (
        5000, "/rootDesc.xml")
    assert sum(b"\x00" in c["data"] and upnp6_target.declares_entities(c["data"])
               for c in cases) > 0  # DOCTYPEs in UTF-16 among them


def test_a_doctype_is_seen_in_any_unicode_encoding_and_alignment() -> None:
    doc = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "x">]><r>&e;</r>'
    for codec in ("utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        for pad in (b"", b"\x00", b"\x00\x00\x00"):
            assert upnp6_target.declares_entities(pad + doc.encode(codec)), codec
    assert not upnp6_target.declares_entities(upnp6_target.description().encode("utf-16"))


def _old_reading(data: bytes, what: str) -> ET.Element:
    """How the client read XML before: a look for the DOCTYPE in the bytes, then
    ElementTree (expat with the declared encoding looked up as a Python codec)."""
    if b"<!DOCTYPE" in data.upper() or b"<!ENTITY" in data.upper():
        raise PinholeError(f"{what} with a DOCTYPE")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise PinholeError(f"{what} that is not XML ({exc})") from None


def test_the_target_finds_the_flaws_of_the_old_reading(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setattr(upnp6, "_xml", _old_reading)
    report = run(Targets().get("upnp6"), cases=400, seconds=120, seed=1, out=tmp_path)
    why = " ".join(Path(p).with_suffix(".txt").read_text() for p in report.saved)
    assert "LookupError" in why  # a codec looked up by the name the router declares
    assert "EntityAccepted" in why  # a DOCTYPE in UTF-16: its entities expanded
    assert "OverBudget" in why  # (up to expat's own limit: 66 MiB for a billion laughs)
