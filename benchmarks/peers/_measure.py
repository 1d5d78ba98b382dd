"""What every peer program of the comparison reports, measured the same way in each process."""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import json
import os
import resource
import sys
import time
from collections.abc import Iterator


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rss_kib() -> int:
    """Resident set size now (``VmRSS``)."""
    return _status_kib("VmRSS")


def peak_rss_kib() -> int:
    """Peak resident set size of the process so far (``VmHWM``)."""
    return _status_kib("VmHWM")


def cpu_s() -> float:
    """User + system CPU seconds of the process, all threads (``getrusage``: microseconds, where
    ``os.times`` counts clock ticks of 10 ms)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def sys_s() -> float:
    """System CPU seconds of the process, all threads: the kernel's share of :func:`cpu_s`
    (page faults, mostly, in a sync: the memory the cache and its transient buffers touch)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


@contextlib.contextmanager
def profiled(phase: str) -> Iterator[None]:
    """cProfile the block when ``KUBECTRL_BENCH_PROFILE`` names a directory: the stats go to
    ``<dir>/<program>-<phase>-<pid>.prof`` (``python -m pstats`` reads them). The profiler
    adds its own cost, so a profiled run's figures are for shares, not for the tables."""
    where = os.environ.get("KUBECTRL_BENCH_PROFILE", "")
    if not where:
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        os.makedirs(where, exist_ok=True)
        program = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        profile.dump_stats(os.path.join(where, f"{program}-{phase}-{os.getpid()}.prof"))


def sync_baseline() -> int:
    """The RSS a sync is measured above: after a full collection, before the sync starts."""
    gc.collect()
    return rss_kib()


def sync_start() -> tuple[float, float, float]:
    """CPU, system CPU and wall clock at the start of a sync, for :func:`emit_synced`."""
    return cpu_s(), sys_s(), time.perf_counter()


def emit_synced(
    start: tuple[float, float, float],
    *,
    objects: int,
    expected: int,
    baseline_rss_kib: int,
    collect: bool = True,
) -> None:
    """Report the ``synced`` phase: wall, CPU and system CPU since ``start`` (taken now), then
    the RSS (after a full collection unless ``collect`` is false)."""
    cpu0, sys0, started = start
    wall = time.perf_counter() - started
    cpu = cpu_s() - cpu0
    system = sys_s() - sys0
    if collect:
        gc.collect()
    emit(
        phase="synced",
        objects=objects,
        expected=expected,
        wall_s=wall,
        cpu_s=cpu,
        sys_s=system,
        rss_kib=rss_kib(),
        baseline_rss_kib=baseline_rss_kib,
    )


def emit(**fields: object) -> None:
    """One JSON line on stdout: the driver reads phases from them."""
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def sync_args() -> argparse.Namespace:
    """The arguments of every informer peer (same as the Go program's flags)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--events", type=int, default=0)
    parser.add_argument(
        "--replay-from",
        default="",
        help="no informer: watch from this resourceVersion and time --events replayed events",
    )
    return parser.parse_args()
