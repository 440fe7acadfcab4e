"""The local run's sender (``dispatch.LocalSender``): what it refuses, what it says of a task
that raised, how it waits for the tasks in play, and that no process of its pools outlives it."""

from __future__ import annotations

import io

from scheduler.dispatch import Lane, LocalSender, Task, play_here


def test_a_local_sender_waits_for_its_tasks_says_what_failed_and_leaves_no_process(tmp_path):
    out = io.StringIO()
    sender = LocalSender(f"sqlite:///{tmp_path}/s.db", play_here, match_slots=1,
                         intake_slots=0, out=out)
    try:
        # no intake slot: a build is not sent (the sender says why)
        assert sender.send(Task.CHECK_VERSION, 7, Lane.INTAKE) is False
        assert sender.error == "no intake slot here" and sender.busy() == 0
        # on a match slot, ``play_here`` plays matches alone: the task raises, the sender says so
        assert sender.send(Task.CHECK_VERSION, 7, Lane.SEASONS) is True
        assert sender.error is None
        sender.wait(60, every=True)
        assert sender.busy() == 0
        assert isinstance(sender.failure, ValueError)
        assert "only matches are played here" in str(sender.failure)
        assert "arena.check_version 7 failed here" in out.getvalue()
        sender.wait(0)  # (the end was seen by the wait before: none since)
        processes = list(sender.pools["match"]._processes.values())
        assert processes and all(p.is_alive() for p in processes)
    finally:
        sender.close()
    assert not any(p.is_alive() for p in processes)
    assert sender.send(Task.PLAY_MATCH, "m-00000", Lane.SEASONS) is False  # closed
    assert "cannot take work" in (sender.error or "")
