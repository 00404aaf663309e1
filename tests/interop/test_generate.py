"""The generator is deterministic: a scenario replays to the stored transcript byte for byte,
and the cases derived from it are the stored ones."""

from __future__ import annotations

from interop import generate as g
from interop.cases import CASES_DIR, load_cases, transcript


def test_scenario_and_its_cases_reproduce():
    sc = next(s for s in g.SCENARIOS if s.name == "dernier-3p-timeout")
    base = g.record_match(sc)
    assert base is not None
    assert base.raw == list(transcript(CASES_DIR, sc.name))
    g.SPECS.clear()
    try:
        g.deck_cases(base, sc.name, None, "shuffle-out-of-turn")
        g.move_cases(base, sc.name)
        specs = list(g.SPECS)
    finally:
        g.SPECS.clear()
    stored = {c.id: c for c in load_cases()}
    compared = 0
    for spec in specs:
        case = stored.get(spec.id)
        if case is None:
            continue
        made = g.case_json(spec, case.expected)
        assert made["input"] == case.input, spec.id
        assert made["section"] == case.section and made["flags"] == list(case.flags)
        compared += 1
    assert compared >= 15
