"""The API-server side against Go, and FakeAPI's CPU per request.

1. kubectrl's wardle server (``examples/sample_apiserver``) and ``k8s.io/sample-apiserver``
   (Go, built from the module proxy at the version ``benchmarks/apiserver/go/go.mod`` pins) on
   one workload from one Go load generator: create / get / list / update at 4 and 32 clients,
   100 watchers receiving every event of 2,000 updates, 10,000 stored objects. Reported per
   phase: requests/s, the server's CPU per request, p50/p99 latency; memory per stored object;
   events received against sent. ``benchmarks/apiserver/workload.py`` says how.
2. FakeAPI: the CPU of a create, a get and the watch event it causes, in-process
   (``benchmarks/apiserver/fakeapi_cost.py``), with its cProfile.

Figures only: nothing here passes or fails on a time. Results go to
``build/bench/apiserver.json`` and the charts to ``docs/assets/bench/apiserver-*.svg``.
``--loaded`` is for a busy machine: the results and charts get a ``-loaded`` suffix and every
title says so (each figure carries the load average it was measured at, loaded or not).
``--smoke``: tiny sizes, to prove the harness works (the unit test runs it).

Run with ``nox -s bench`` or ``python benchmarks/bench_apiserver.py [--loaded]``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import pstats
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the charts (_svg)
sys.path.insert(0, str(Path(__file__).resolve().parent / "apiserver"))

import _build
import _svg
import fakeapi_cost
import workload

ROOT = Path(__file__).resolve().parents[1]
SERVERS = {"kubectrl": "kubectrl (wardle example)", "go": "k8s.io/sample-apiserver"}


def _phase_name(phase: dict[str, Any]) -> str:
    return f"{phase['op']} {phase['clients']}"


def tables(results: dict[str, Any]) -> str:
    """The results as markdown tables."""
    servers = results["servers"]
    lines = [
        "| phase | server | requests/s | CPU µs/request | etcd CPU µs/request | p50 ms | p99 ms "
        "| load |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    names = list(servers)
    for i, phase in enumerate(servers[names[0]]["phases"]):
        for name in names:
            p = servers[name]["phases"][i]
            etcd = p.get("etcd_cpu_per_request_us")
            lines.append(
                f"| {_phase_name(phase)} | {name} | {p['requests_per_second']:,.0f} "
                f"| {p['cpu_per_request_us']:,.0f} | {'' if etcd is None else f'{etcd:,.0f}'} "
                f"| {p['p50_us'] / 1000:.1f} | {p['p99_us'] / 1000:.1f} "
                f"| {p['load_average']:.1f} |"
            )
    lines += [
        "",
        "| server | objects | RSS empty MiB | RSS full MiB | bytes per object |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in names:
        s = servers[name]
        lines.append(
            f"| {name} | {s['objects']:,} | {s['rss_empty_bytes'] / 2**20:.0f} "
            f"| {s['rss_full_bytes'] / 2**20:.0f} | {s['memory_per_object_bytes']:,.0f} |"
        )
    lines += [
        "",
        "| server | watchers | events sent | fewest received | watchers behind | watches ended "
        "| update CPU µs (with fan-out) | lag p50 ms | lag p99 ms | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        w = servers[name]["watch"]
        lines.append(
            f"| {name} | {w['watchers']} | {w['events_sent']:,} | {w['events_received_min']:,} "
            f"| {w['watchers_behind']} | {w['watchers_ended_early']} "
            f"| {w['cpu_per_request_us']:,.0f} | {w['lag_p50_us'] / 1000:.1f} "
            f"| {w['lag_p99_us'] / 1000:.1f} | {w['load_average']:.1f} |"
        )
    fake = results.get("fakeapi")
    if fake:
        lines += [
            "",
            "| FakeAPI level | CPU µs per create + get + watch event |",
            "|---|---:|",
            f"| FakeAPI (its transport) | {fake['fakeapi']['cpu_us_per_round']:,.0f} |",
            f"| through AsyncClient | {fake['client']['cpu_us_per_round']:,.0f} |",
        ]
    return "\n".join(lines)


def charts(results: dict[str, Any], suffix: str) -> dict[str, str]:
    """SVG charts by file name, each title with its load average."""
    servers = results["servers"]
    names = list(servers)
    label = " (loaded)" if results["loaded"] else ""
    load = f"load avg {results['load_average_start']:.1f}-{results['load_average_end']:.1f}"
    groups = [_phase_name(p) for p in servers[names[0]]["phases"]]

    def per_phase(key: str, scale: float = 1.0) -> dict[str, list[float | None]]:
        return {SERVERS[n]: [p[key] * scale for p in servers[n]["phases"]] for n in names}

    out = {
        f"apiserver-cpu{suffix}.svg": _svg.grouped_bar_chart(
            f"Server CPU per request, {load}{label}", "CPU µs per request", groups,
            per_phase("cpu_per_request_us"),
        ),
        f"apiserver-rps{suffix}.svg": _svg.grouped_bar_chart(
            f"Requests per second, {load}{label}", "requests/s", groups,
            per_phase("requests_per_second"),
        ),
        f"apiserver-p99{suffix}.svg": _svg.grouped_bar_chart(
            f"p99 latency, {load}{label}", "ms", groups, per_phase("p99_us", 1e-3),
        ),
        f"apiserver-memory{suffix}.svg": _svg.grouped_bar_chart(
            f"RSS per stored object, {load}{label}", "bytes per object", ["10k objects"],
            {SERVERS[n]: [servers[n]["memory_per_object_bytes"]] for n in names},
        ),
        f"apiserver-watch{suffix}.svg": _svg.grouped_bar_chart(
            f"{servers[names[0]]['watch']['watchers']} watchers: event lag, {load}{label}",
            "ms from the write's start to the event",
            ["lag p50", "lag p99"],
            {
                SERVERS[n]: [
                    servers[n]["watch"]["lag_p50_us"] / 1000,
                    servers[n]["watch"]["lag_p99_us"] / 1000,
                ]
                for n in names
            },
        ),
    }  # fmt: skip
    fake = results.get("fakeapi")
    if fake:
        out[f"apiserver-fakeapi{suffix}.svg"] = _svg.grouped_bar_chart(
            f"FakeAPI: CPU of create + get + watch event, {load}{label}",
            "CPU µs",
            ["FakeAPI", "via AsyncClient"],
            {
                "measured": [
                    fake["fakeapi"]["cpu_us_per_round"],
                    fake["client"]["cpu_us_per_round"],
                ],
                "target": [100.0, None],
            },
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loaded", action="store_true", help="a busy machine: label the figures")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (the harness's test)")
    parser.add_argument("--json", default=None, help="results file (default build/bench/...)")
    parser.add_argument(
        "--charts", default=None, help="chart directory (default docs/assets/bench)"
    )
    parser.add_argument("--fakeapi-rounds", type=int, default=None, help="FakeAPI rounds")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print FakeAPI's cProfile, and kubectrl's server's from one more run under cProfile",
    )
    args = parser.parse_args(argv)
    sizes = workload.SMOKE if args.smoke else workload.Sizes()
    suffix = "-loaded" if args.loaded else ""
    suffix = "-smoke" if args.smoke else suffix
    results: dict[str, Any] = {
        "loaded": args.loaded,
        "smoke": args.smoke,
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg()[0],
        "sizes": dataclasses.asdict(sizes),
    }
    if not args.loaded and os.getloadavg()[0] > (os.cpu_count() or 1):
        print(f"note: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: "
              "these are loaded figures (rerun with --loaded to label them so)")  # fmt: skip
    binaries = _build.build()
    logs = Path(args.json).parent if args.json else ROOT / "build" / "bench"
    results["servers"] = workload.run(binaries, sizes, log_dir=logs / f"apiserver-logs{suffix}")
    rounds = args.fakeapi_rounds or (50 if args.smoke else 3000)
    results["fakeapi"] = fakeapi_cost.measure(rounds, warmup=min(200, rounds))
    if args.profile:
        print(fakeapi_cost.profile(rounds))
        stats_file = ROOT / "build" / "bench" / f"apiserver-server{suffix}.prof"
        stats_file.parent.mkdir(parents=True, exist_ok=True)
        workload.run(binaries, sizes, servers=("kubectrl",), profile=stats_file)
        text = io.StringIO()
        pstats.Stats(str(stats_file), stream=text).sort_stats("tottime").print_stats(40)
        print(f"kubectrl's server under the workload ({stats_file}):\n{text.getvalue()}")
    results["load_average_end"] = os.getloadavg()[0]
    out = Path(args.json or ROOT / "build" / "bench" / f"apiserver{suffix}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    chart_dir = Path(args.charts or ROOT / "docs" / "assets" / "bench")
    chart_dir.mkdir(parents=True, exist_ok=True)
    for name, svg in charts(results, suffix).items():
        (chart_dir / name).write_text(svg)
    print(tables(results))
    start, end = results["load_average_start"], results["load_average_end"]
    print(
        f"\nresults: {out}; charts: {chart_dir}/apiserver-*{suffix}.svg; load {start:.1f}-{end:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
