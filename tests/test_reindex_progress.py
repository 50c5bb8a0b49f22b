"""A reindex of every namespace reports progress over ALL of them (issue 14): done rises once
from 0 to the total of the job's rows, never restarting at each namespace."""

import pytest

from memories import services
from operations import reindex

pytestmark = pytest.mark.django_db


def test_reindex_all_progress_counts_every_namespace(builtins, settings):
    settings.MEMORY_REINDEX_BATCH = 2
    for n in range(3):
        services.memory_create(user_id="ns-one", content=f"first namespace fact {n}")
    for n in range(4):
        services.memory_create(user_id="ns-two", content=f"second namespace fact {n}")
    gone, _ = services.memory_create(user_id="ns-two", content="a forgotten fact")
    services.memory_forget(memory_id=gone.memory_id, reason="test")
    calls = []
    reindex.reindex_all(progress=lambda ns, done, total: calls.append((ns, done, total)))
    assert {total for _, _, total in calls} == {7}
    dones = [done for _, done, _ in calls]
    assert dones == sorted(dones) and dones[-1] == 7
    assert [c for c in calls if c[0] == "ns-two"][0][1] > 3  # continues after ns-one's 3
