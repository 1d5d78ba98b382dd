"""benchmarks/bench_apiserver.py's smoke mode runs the whole harness at tiny sizes: both
servers (kubectrl's wardle example and k8s.io/sample-apiserver, built from the module proxy),
every phase, the watchers, FakeAPI's rounds, the JSON and the charts. No time is asserted:
what is checked is that every request succeeded and every figure was produced."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def test_bar_chart_draws_a_bar_per_value_and_refuses_a_short_series() -> None:
    charts = load(BENCHMARKS / "_svg.py")
    svg = charts.grouped_bar_chart(
        "CPU, load avg 1.0", "µs", ["get 4", "get 32"], {"a": [1, 2], "b": [3, None]}
    )
    root = ET.fromstring(svg)
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(rects) == 1 + 3 + 2  # background, three bars, two legend keys
    with pytest.raises(ValueError, match="'b' has 1 values for 2 groups"):
        charts.grouped_bar_chart("t", "µs", ["get 4", "get 32"], {"a": [1, 2], "b": [3]})


@pytest.mark.integration
def test_smoke_run_measures_both_servers_and_fakeapi(tmp_path: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("no `go` on PATH: k8s.io/sample-apiserver and the load generator need Go")
    bench = load(BENCHMARKS / "bench_apiserver.py")
    workload = sys.modules["workload"]
    out = tmp_path / "apiserver.json"
    assert bench.main(["--smoke", "--json", str(out), "--charts", str(tmp_path)]) == 0
    results = json.loads(out.read_text())
    sizes = workload.SMOKE
    assert set(results["servers"]) == {"kubectrl", "go"}
    for name, server in results["servers"].items():
        ops = [(p["op"], p["clients"]) for p in server["phases"]]
        assert ops == [
            ("create", 4), ("create", 32), ("get", 4), ("get", 32),
            ("list", 4), ("list", 32), ("update", 4), ("update", 32),
        ], name  # fmt: skip
        assert all(p["errors"] == 0 for p in server["phases"]), name
        assert server["phases"][1]["stored"] == sizes.objects, name
        lists = [p for p in server["phases"] if p["op"] == "list"]
        assert all(p["items_per_page"] == sizes.limit for p in lists), name
        watch = server["watch"]
        assert watch["watchers"] == sizes.watchers
        assert watch["events_received_min"] == watch["events_sent"] == sizes.watch_updates, name
        assert watch["watchers_behind"] == 0, name
        assert watch["watchers_ended_early"] == 0, name
        assert server["rss_full_bytes"] > 0, name
    assert "etcd_cpu_per_request_us" in results["servers"]["go"]["phases"][0]
    for level in ("fakeapi", "client"):
        assert results["fakeapi"][level]["events"] == results["fakeapi"]["rounds"]
    logs = sorted(p.name for p in (tmp_path / "apiserver-logs-smoke").iterdir())
    assert logs == ["kubectrl-server.log", "sample-apiserver.log", "sample-etcd.log"]
    charts = sorted(p.name for p in tmp_path.glob("apiserver-*-smoke.svg"))
    assert charts == [
        f"apiserver-{n}-smoke.svg" for n in ("cpu", "fakeapi", "memory", "p99", "rps", "watch")
    ]
    for chart in charts:
        title = ET.parse(tmp_path / chart).getroot().find("{http://www.w3.org/2000/svg}title")
        assert title is not None
        assert "load avg" in (title.text or ""), chart
