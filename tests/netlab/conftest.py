"""The ``netlab`` fixture: a fresh lab of namespaces per test, torn down after it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from .lab import Lab, ensure_tools
from .nat import NatLab


@pytest.fixture
def netlab() -> Iterator[Callable[[dict[str, bool]], Lab]]:
    """``netlab({"A": True, "B": False})`` builds routers A (with UPnP) and B; every lab made
    is removed after the test. Skips, saying why, where namespaces cannot be made."""
    reason = ensure_tools()
    if reason is not None:
        pytest.skip(f"network namespaces unavailable: {reason}")
    labs: list[Lab] = []

    def make(routers: dict[str, bool]) -> Lab:
        lab = Lab(routers)
        labs.append(lab)
        return lab.up()

    try:
        yield make
    finally:
        for lab in labs:
            lab.down()


@pytest.fixture
def natlab() -> Iterator[Callable[[dict[str, str]], NatLab]]:
    """``natlab({"A": "port-restricted", "B": "symmetric"})`` builds routers of those NAT
    kinds (:mod:`.nat`); removed after the test, skipped where namespaces cannot be made."""
    reason = ensure_tools()
    if reason is not None:
        pytest.skip(f"network namespaces unavailable: {reason}")
    labs: list[NatLab] = []

    def make(kinds: dict[str, str]) -> NatLab:
        lab = NatLab.of(kinds)
        labs.append(lab)
        return lab.up()

    try:
        yield make
    finally:
        for lab in labs:
            lab.down()
