"""SQLiteStorage killed with SIGKILL in the middle of writes loses no acknowledged write.

A writer process (sqlite_writer.py) writes and acknowledges each write once the storage
returned it; the test kills it at a random moment, five times, reopening the database between
rounds. Every acknowledged write must be in the history at its revision with its content,
revisions must only grow across the rounds, and each object's stored state must be at least as
new as its last acknowledged write (an unacknowledged last write may or may not be there). A
process crash, not a power loss: the kernel still holds what the process handed it, which is
what ``synchronous`` does not decide (docs/extension-apiservers.md, durability).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from kubectrl.apiserver._storage.sqlite import SQLiteStorage

CM = ("", "configmaps")
WRITER = Path(__file__).with_name("sqlite_writer.py")


def _run_until_killed(path: Path, start: int, writes: int) -> list[tuple[int, str, int]]:
    """Start the writer at ``start``, kill it once it acknowledged ``writes`` writes (and a
    few milliseconds more at random, so the kill lands inside a write), return the acks."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    acks: list[tuple[int, str, int]] = []
    deadline = time.monotonic() + 120
    try:
        while len(acks) < writes:
            line = proc.stdout.readline()
            if not line:
                raise AssertionError(f"the writer ended early: {proc.stderr.read()}")  # type: ignore[union-attr]
            revision, name, i = line.split()
            acks.append((int(revision), name, int(i)))
            assert time.monotonic() < deadline, "the writer did not write within 120 s"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        rest, _ = proc.communicate(timeout=30)
    # lines written before the kill are acknowledged writes too
    for line in rest.splitlines():
        parts = line.split()
        if len(parts) == 3:
            acks.append((int(parts[0]), parts[1], int(parts[2])))
    return acks


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    rng = random.Random(20261128)
    acked: list[tuple[int, str, int]] = []
    start = 0
    for _ in range(5):
        round_acks = _run_until_killed(path, start, rng.randrange(200, 600))
        assert round_acks, "no write was acknowledged"
        if acked:
            assert round_acks[0][0] > acked[-1][0], "a revision was reused after the kill"
        acked += round_acks
        start = round_acks[-1][2] + 2  # the next round's content never repeats an acked one

        storage = SQLiteStorage(path)
        try:
            history = {c.revision: c for c in storage.changes(0)}
            for revision, name, i in acked:
                change = history.get(revision)
                assert change is not None, f"acknowledged write at revision {revision} is lost"
                assert change.key == ("d", name)
                assert change.object["data"] == {"i": str(i)}
            last: dict[str, int] = {}
            for _, name, i in acked:
                last[name] = i
            for name, i in last.items():
                stored = storage.get(CM, ("d", name))
                assert stored is not None
                assert int(stored["data"]["i"]) >= i
            revisions = sorted(history)
            assert revisions == list(range(revisions[0], revisions[-1] + 1))
            assert storage.revision >= acked[-1][0]
        finally:
            storage.close()
    assert len(acked) >= 1000
