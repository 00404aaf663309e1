"""The rules table of the code is PROTOCOL.md 7.5's, row for row (liveness/table.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dernier_p2p.protocol.liveness.table import NAMES, RULES, Rule, rule

PROTOCOL = Path(__file__).resolve().parents[3] / "PROTOCOL.md"
HEADER = "| rule | who | when | does |"


def protocol_rows() -> list[list[str]]:
    """The rows of the liveness rules table of PROTOCOL.md 7.5, split into cells."""
    lines = PROTOCOL.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER)
    assert set(lines[start + 1]) <= set("|-")  # the separator row
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def protocol_names() -> list[str]:
    names = []
    for cells in protocol_rows():
        found = re.fullmatch(r"`([a-z0-9-]+)`", cells[0])
        assert found, f"a rule cell that is not one name: {cells[0]!r}"
        names.append(found.group(1))
    return names


def test_the_header_is_found_once_and_its_table_has_rows():
    text = PROTOCOL.read_text(encoding="utf-8")
    assert text.count(HEADER) == 1
    rows = protocol_rows()
    assert len(rows) == len(RULES)
    assert all(len(cells) == 4 for cells in rows)


def test_every_rule_of_protocol_md_is_in_the_code_and_back():
    names = protocol_names()
    assert len(names) == len(set(names))
    assert set(names) == NAMES
    assert [r.name for r in RULES] == names  # the same order, too


def test_rule_names_are_unique_and_rows_are_filled():
    assert len(NAMES) == len(RULES)
    for r in RULES:
        assert isinstance(r, Rule)
        assert r.name and r.who and r.when and r.does


def test_who_may_act_matches_the_protocol():
    """The code's ``who`` says who the protocol's says (host, seat, m >= 3 ...)."""
    code = {r.name: r.who for r in RULES}
    for cells in protocol_rows():
        name = cells[0].strip("`")
        theirs, ours = cells[1].replace("`", ""), code[name]
        for word in ("host", "seat", "candidate", "m >= 3", "m = 2", "every peer"):
            assert (word in theirs) == (word in ours), (name, word, theirs, ours)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_rule_returns_a_known_name(name):
    assert rule(name) == name


@pytest.mark.parametrize("name", ["", "Beat", "time-out", "take_over", "no-contest", "leave"])
def test_rule_refuses_an_unknown_name(name):
    """A machine naming a rule the table lacks fails at once, naming it."""
    with pytest.raises(KeyError, match=f"no liveness rule {re.escape(repr(name))}"):
        rule(name)
