"""The generator is deterministic: a scenario replays to the stored transcript byte for byte,
and the cases derived from it are the stored ones."""

from __future__ import annotations

from interop.cases import CASES_DIR, load_cases, transcript
from interop.gen.forge import SPECS
from interop.gen.groups import GROUPS, deck, moves
from interop.gen.output import case_json
from interop.gen.scenarios import SCENARIOS, record_match


def test_scenario_and_its_cases_reproduce():
    sc = next(s for s in SCENARIOS if s.name == "dernier-3p-timeout")
    base = record_match(sc)
    assert base is not None
    assert base.raw == list(transcript(CASES_DIR, sc.name))
    SPECS.clear()
    try:
        deck.deck_cases(base, sc.name, None, "shuffle-out-of-turn")
        moves.move_cases(base, sc.name)
        specs = list(SPECS)
    finally:
        SPECS.clear()
    stored = {c.id: c for c in load_cases()}
    compared = 0
    for spec in specs:
        case = stored.get(spec.id)
        if case is None:
            continue
        made = case_json(spec, case.expected)
        assert made["input"] == case.input, spec.id
        assert made["section"] == case.section and made["flags"] == list(case.flags)
        compared += 1
    assert compared >= 15


def test_every_group_module_is_registered_and_builds():
    """Each module of interop/gen/groups has a build() and is in GROUPS (a new group cannot be
    forgotten in the list)."""
    import pkgutil

    import interop.gen.groups as pkg

    names = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    assert names == {m.__name__.rsplit(".", 1)[1] for m in GROUPS}
    assert all(callable(getattr(m, "build", None)) for m in GROUPS)
