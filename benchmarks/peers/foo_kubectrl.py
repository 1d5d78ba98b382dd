"""kubectrl's Foo controller (examples/sample_controller) at the client limits the driver asks.

The example's ``main`` with its kubeconfig loader wrapped to set the client's rate limit (the Go
side gets the same numbers through ``-qps``/``-burst``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

EXAMPLE = Path(
    os.environ.get("KUBECTRL_BENCH_EXAMPLE")
    or Path(__file__).resolve().parents[2] / "examples" / "sample_controller"
)
sys.path.insert(0, str(EXAMPLE))

import main as sample  # noqa: E402
from _measure import profiled  # noqa: E402

from kubectrl.client import ClientConfig, RateLimit  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--kubeconfig", required=True)
parser.add_argument("--qps", type=float, default=1000)
parser.add_argument("--burst", type=int, default=1000)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--tracemalloc-after", type=float, default=0.0)
parser.add_argument("--tracemalloc-every", type=float, default=300.0)
parser.add_argument("--tracemalloc-out", default="")
parser.add_argument("--tracemalloc-frames", type=int, default=1)
parser.add_argument(
    "--garbage-report",
    default="",
    metavar="AFTER,WINDOW,FILE",
    help="after AFTER seconds, collect, then keep what the collector finds unreachable over "
    "WINDOW seconds (gc.DEBUG_SAVEALL) and write its types, most common first, to FILE",
)
parser.add_argument(
    "--malloc-trim-every",
    type=float,
    default=0.0,
    help="call glibc's malloc_trim(0) every this many seconds (an experiment: how much of the "
    "RSS is free heap glibc kept)",
)
parser.add_argument(
    "--alloc-report",
    default="",
    metavar="EVERY,FILE",
    help="every EVERY seconds append to FILE (JSON lines) where the memory is: pymalloc's "
    "arenas and the bytes in their used blocks, glibc's mallinfo2, "
    "live objects and threads (an experiment: live data against allocator slack)",
)
parser.add_argument(
    "--correlator-lru",
    type=int,
    default=0,
    help="hold the event correlator's caches to this many entries (an experiment: the soak's "
    "growth without the correlator filling its caches; client-go's and the default are 4096)",
)
args = parser.parse_args()


def trace_growth(after: float, every: float, out: str, frames: int) -> None:
    """Start tracemalloc ``after`` seconds in; every ``every`` seconds append to ``out`` (JSON
    lines) the allocation sites that grew most since the first snapshot (with ``frames`` > 1,
    grouped by call stack, each given innermost call first)."""
    import gc
    import json
    import threading
    import time
    import tracemalloc

    def run() -> None:
        time.sleep(after)  # a warm-up the soak asks for, not a wait for a condition
        tracemalloc.start(frames)
        first = tracemalloc.take_snapshot()
        started = time.monotonic()
        while True:
            time.sleep(every)  # the sampling period
            gc.collect()
            snapshot = tracemalloc.take_snapshot()
            diff = snapshot.compare_to(first, "lineno" if frames == 1 else "traceback")
            top = [
                {
                    "site": str(stat.traceback[0])
                    if frames == 1
                    else [str(frame) for frame in reversed(stat.traceback)],
                    "size_diff_kib": round(stat.size_diff / 1024, 1),
                    "count_diff": stat.count_diff,
                }
                for stat in diff[:25]
            ]
            traced, _peak = tracemalloc.get_traced_memory()
            line = {
                "seconds_traced": round(time.monotonic() - started),
                "traced_kib": traced // 1024,
                "gc_objects": len(gc.get_objects()),
                "top": top,
            }
            with open(out, "a") as sink:
                sink.write(json.dumps(line) + "\n")

    threading.Thread(target=run, name="tracemalloc-growth", daemon=True).start()


def trim_every(period: float) -> None:
    import ctypes
    import threading
    import time

    libc = ctypes.CDLL("libc.so.6")

    def run() -> None:
        while True:
            time.sleep(period)  # the trimming period
            libc.malloc_trim(0)

    threading.Thread(target=run, name="malloc-trim", daemon=True).start()


def garbage_report(after: float, window: float, out: str) -> None:
    """What the cycle collector frees: objects in reference cycles, counted by type."""
    import collections
    import gc
    import json
    import threading
    import time

    def run() -> None:
        time.sleep(after)  # a warm-up the experiment asks for
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        time.sleep(window)  # the window the garbage accumulates over
        gc.collect()
        kinds = collections.Counter(type(obj).__qualname__ for obj in gc.garbage)
        gc.set_debug(0)
        total = len(gc.garbage)
        gc.garbage.clear()
        with open(out, "w") as sink:
            json.dump({"window_s": window, "objects": total, "types": kinds.most_common(40)}, sink)

    threading.Thread(target=run, name="garbage-report", daemon=True).start()


def pymalloc_stats() -> dict[str, int]:
    """The figures of ``sys._debugmallocstats()``, which writes to the C stderr."""
    import re
    import tempfile

    wanted = {
        "# arenas allocated current": "arenas",
        "# arenas highwater mark": "arenas_highwater",
        "# bytes in allocated blocks": "used_block_bytes",
        "# bytes in available blocks": "free_block_bytes",
        "unused pools": "unused_pool_bytes",
    }
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        sys.stderr.flush()
        os.dup2(sink.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode(errors="replace")
    stats: dict[str, int] = {}
    for line in text.splitlines():
        for label, key in wanted.items():
            if label in line and key not in stats:
                stats[key] = int(re.sub(r"[^0-9]", "", line.rsplit("=", 1)[1]))
    return stats


def mallinfo2() -> dict[str, int]:
    import ctypes

    fields = ["arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks"]
    fields += ["uordblks", "fordblks", "keepcost"]

    class Info(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in fields]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    info = libc.mallinfo2()
    return {name: int(getattr(info, name)) for name in fields}


def alloc_report(every: float, out: str) -> None:
    import gc
    import json
    import threading
    import time

    def run() -> None:
        started = time.monotonic()
        while True:
            time.sleep(every)  # the sampling period
            line = {
                "seconds": round(time.monotonic() - started),
                "allocated_blocks": sys.getallocatedblocks(),
                "gc_objects": len(gc.get_objects()),
                "threads": threading.active_count(),
                "pymalloc": pymalloc_stats(),
                "mallinfo2": mallinfo2(),
            }
            with open(out, "a") as sink:
                sink.write(json.dumps(line) + "\n")

    threading.Thread(target=run, name="alloc-report", daemon=True).start()


if args.correlator_lru:
    from kubectrl.events import _correlator

    _defaults = _correlator.CorrelatorOptions.__init__.__defaults__ or ()
    _correlator.CorrelatorOptions.__init__.__defaults__ = (args.correlator_lru, *_defaults[1:])
    if _correlator.CorrelatorOptions().lru_size != args.correlator_lru:
        raise SystemExit("--correlator-lru: CorrelatorOptions' first field is not lru_size")
if args.alloc_report:
    every_s, report_path = args.alloc_report.split(",", 1)
    alloc_report(float(every_s), report_path)
if args.garbage_report:
    after_s, window_s, report_file = args.garbage_report.split(",", 2)
    garbage_report(float(after_s), float(window_s), report_file)
if args.malloc_trim_every:
    trim_every(args.malloc_trim_every)
if args.tracemalloc_after:
    trace_growth(
        args.tracemalloc_after,
        args.tracemalloc_every,
        args.tracemalloc_out,
        args.tracemalloc_frames,
    )

_load = sample.load_kubeconfig


def load_kubeconfig(path: str | None = None, *, context: str | None = None) -> ClientConfig:
    config = _load(path, context=context)
    return config.with_options(rate_limit=RateLimit(qps=args.qps, burst=args.burst))


sample.load_kubeconfig = load_kubeconfig  # type: ignore[assignment]
# KUBECTRL_BENCH_PROFILE=DIR: a cProfile of the whole run, written when the controller stops
# (the driver's SIGTERM: the example's manager shuts down and main returns)
with profiled("foo"):
    code = sample.main(
        [
            "--kubeconfig",
            args.kubeconfig,
            "--workers",
            str(args.workers),
            "--metrics-bind-address",
            "0",
        ]
    )
sys.exit(code)
