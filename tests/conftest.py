"""Suite-wide collection order: the tests marked ``slow`` run first.

With ``pytest -n 3`` the workers share the tests as they free up; a long test that starts last
keeps one worker busy after the others have finished. Starting the long ones first (longest
processing time first, with the mark as the estimate) lets the short ones fill in around them;
xdist queues the first tests on one worker, so the suite runs with ``--dist worksteal``
(pyproject.toml) and the other workers take them from that queue.
The order within each group is the collection order, so every worker sees the same order.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
