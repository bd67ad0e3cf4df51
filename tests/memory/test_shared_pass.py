"""memory/recall/shared.py: turns that need the lazy pass at once share one, and none is given a
pass that began before it asked."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from memory.recall.shared import SharedPass
from tests.waiting import HANG_SECONDS, wait_for


def test_callers_arriving_during_a_pass_share_the_next_one():
    shared = SharedPass()
    release = threading.Event()
    passes: list[int] = []  # how many callers had asked when each pass began

    def held_pass() -> str:
        passes.append(shared._asked)
        if len(passes) == 1:
            assert release.wait(HANG_SECONDS)
        return f"pass {len(passes)}"

    with ThreadPoolExecutor(6) as pool:
        first = pool.submit(shared.run, held_pass)
        wait_for(lambda: passes, "the first pass to begin")
        later = [pool.submit(shared.run, held_pass) for _ in range(5)]
        wait_for(lambda: shared._asked == 6, "the five to ask")
        release.set()
        results = [future.result(HANG_SECONDS) for future in later]

    assert first.result() == "pass 1"
    assert passes == [1, 6]  # two passes for six callers; the second began after all asked
    assert results.count("pass 2") == 1 and results.count(None) == 4, results


def test_a_pass_that_began_before_a_caller_asked_does_not_cover_it():
    shared = SharedPass()
    assert shared.run(lambda: "one") == "one"
    assert shared.run(lambda: "two") == "two"  # asked after the first ended: a pass of its own


def test_a_failed_pass_covers_nobody():
    shared = SharedPass()

    def broken() -> str:
        raise RuntimeError("index unavailable")

    with pytest.raises(RuntimeError):
        shared.run(broken)
    assert shared.run(lambda: "again") == "again"
