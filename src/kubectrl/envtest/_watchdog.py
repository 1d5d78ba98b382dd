"""A watchdog that cleans up after a control plane whose owner died.

``ControlPlane`` starts etcd and kube-apiserver in process groups of their own, so a Ctrl-C in a
terminal or a test runner killing its own group does not leave them half-dead. That also means
nothing kills them when the owning Python process dies abruptly (SIGKILL, OOM, a crash). This
module is that something: a tiny process, in its own session, that reads commands from a pipe
whose only writer is the owner. The kernel closes the pipe when the owner dies, however it dies;
on end-of-file without a prior ``release`` the watchdog terminates every registered process
group (SIGTERM, then SIGKILL after a grace period) and removes every registered directory.

Why not ``PR_SET_PDEATHSIG``: it is Linux-only, fires when the *thread* that started the child
exits (not the process), and needs ``preexec_fn``, which is unsafe with threads.

Protocol, one command per line on stdin:

``pgid <n>``   terminate process group ``n`` on owner death;
``path <p>``   remove directory ``p`` on owner death (after the processes are gone);
``release``    the owner cleaned up itself; exit without touching anything.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

GRACE_SECONDS = 5.0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cleanup(pgids: list[int], paths: list[str], grace: float = GRACE_SECONDS) -> None:
    """Terminate the process groups, escalate to SIGKILL after ``grace``, remove the paths."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_group_alive(p) for p in pgids):
        time.sleep(0.05)
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def main() -> int:
    # The owner's terminal or test runner may signal its whole group; we must outlive it to
    # clean up, so only end-of-file (or SIGTERM, treated the same way) ends the watch.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(0)

    pgids: list[int] = []
    paths: list[str] = []
    released = False
    try:
        signal.signal(signal.SIGTERM, on_term)
        for line in sys.stdin:
            command, _, argument = line.strip().partition(" ")
            if command == "pgid":
                pgids.append(int(argument))
            elif command == "path":
                paths.append(argument)
            elif command == "release":
                released = True
                break
    except SystemExit:
        pass
    finally:
        if not released:
            cleanup(pgids, paths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
