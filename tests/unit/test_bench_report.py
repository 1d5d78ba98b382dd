"""The comparison harness's reporting (benchmarks/_report.py) and its ``--loaded`` busy core
(benchmarks/compare.py): every table carries its spread and load, every metric gets a chart,
the docs section is rewritten from result files alone. No figure is asserted, only structure."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SVG = "{http://www.w3.org/2000/svg}"


def load(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # the scripts import each other as top-level modules
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def runs(*values: float, load: float = 1.5) -> list[dict[str, Any]]:
    return [{"cpu_per_event_us": value, "loadavg": load} for value in values]


def report(loaded: bool) -> dict[str, Any]:
    summary = load("_report").table(
        "CPU per watch event",
        [("cpu_per_event_us", "CPU per event", "us", 1.0, 1)],
        {"kubectrl": runs(20, 22, 30), "client-go": runs(10, 11, 12, load=2.5)},
        "kubectrl",
    )
    return {
        "machine": {"cpus": 2, "loadavg_at_start": [0.5, 0, 0], "loadavg_at_end": [1.0, 0, 0]},
        "args": {"rounds": 3},
        "load": {"loaded": loaded},
        "events": summary,
        "memory_layers": [
            {"layer": "interpreter", "rss_kib": 9000, "added_kib": 9000, "heap_kib": 500}
            | {"anon_kib": 1000, "file_kib": 7500},
        ],
        "soak": {"samples": [{"minute": m, "rss_kib": 80_000 + m} for m in range(12)]},
    }


def test_a_table_keeps_spread_ratio_and_load_of_its_runs() -> None:
    summary = report(loaded=False)["events"]
    own = summary["kubectrl"]["cpu_per_event_us"]
    assert (own["median"], own["min"], own["max"]) == (22, 20, 30)
    assert summary["client-go"]["ratio_kubectrl_to_peer"]["cpu_per_event_us"] == 2.0
    assert summary["client-go"]["loadavg"]["median"] == 2.5
    table = load("_report").markdown_table(summary)
    assert "| CPU per event | 22.0 us (20.0-30.0) | 11.0 us (10.0-12.0); kubectrl 2.00x |" in table
    assert "| load average (1 min) during the runs | 1.5 (1.5-1.5) | 2.5 (2.5-2.5) |" in table


def test_every_metric_gets_a_bar_chart_that_names_the_load(tmp_path: Path) -> None:
    charts = load("_report").write_charts(report(loaded=True), tmp_path, "loaded-")
    (chart,) = charts["events"]
    assert chart.name == "loaded-events-cpu-per-event-us.svg"
    root = ET.fromstring(chart.read_text())
    texts = {t.text or "" for t in root.iter(f"{SVG}text")}
    assert {"kubectrl", "client-go"} <= texts
    assert any(t.startswith("loaded: a busy-loop process kept one core busy") for t in texts)
    assert len(root.findall(f"{SVG}rect")) == 3  # the background and one bar per peer


def test_render_rewrites_only_the_generated_section(tmp_path: Path) -> None:
    report_module = load("_report")
    compare = load("compare")
    quiet, loaded = tmp_path / "quiet.json", tmp_path / "loaded.json"
    quiet.write_text(json.dumps(report(loaded=False)))
    loaded.write_text(json.dumps(report(loaded=True)))
    docs = tmp_path / "docs" / "performance.md"
    docs.parent.mkdir()
    docs.write_text(f"# Performance\n\n{report_module.BEGIN}\nold\n{report_module.END}\nkept\n")
    compare.render([str(quiet), str(loaded)], docs, docs.parent / "assets" / "bench")
    page = docs.read_text()
    assert "old" not in page
    assert page.endswith(f"{report_module.END}\nkept\n")
    assert "### Quiet run" in page
    assert "### Loaded run" in page
    assert "![quiet-events-cpu-per-event-us (quiet)](assets/bench/quiet-events-" in page
    assert (docs.parent / "assets" / "bench" / "loaded-events-cpu-per-event-us.svg").exists()
    assert "| interpreter | 8.8 MB | +8.8 MB | 0.5 / 1.0 / 7.3 MB |" in page
    assert "| minute | 0 | 10 | 11 |" in page
    assert (docs.parent / "assets" / "bench" / "quiet-soak-rss.svg").exists()


def test_a_page_without_the_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="exactly one section between"):
        load("_report").replace_section("# Performance\n", "tables\n")


def test_the_busy_core_runs_for_the_run_and_is_recorded() -> None:
    load("_report")
    compare = load("compare")
    with compare.BusyCore() as busy:
        record = busy.record()
        proc = busy.proc
    assert record["loaded"] is True
    assert record["busy_pid"] == proc.pid
    assert proc.poll() is not None  # stopped when the run ends
    with pytest.raises(subprocess.TimeoutExpired):  # a busy loop never exits by itself
        subprocess.run([sys.executable, "-c", compare.BUSY_LOOP], timeout=0.2, check=False)


def test_the_smoke_run_writes_tables_charts_and_load(tmp_path: Path) -> None:
    """``compare.py --smoke``: tiny sizes, one round, one local control plane (kubectrl.envtest)."""
    out = tmp_path / "smoke.json"
    subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "compare.py"),
            "--smoke",
            "--workloads",
            "sync,import",
            "--json",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    result = json.loads(out.read_text())
    assert result["load"] == {"loaded": False}
    assert result["args"]["configmaps"] == 30
    assert "loadavg" in result["sync"]["kubectrl"]
    assert result["sync_runs"]["kubectrl"][0]["objects"] == 30
    assert (tmp_path / "sync-wall-s.svg").exists()
    assert (tmp_path / "import-rss-kib.svg").exists()


def test_the_soak_splits_rss_by_mapping_and_charts_several_soaks(tmp_path: Path) -> None:
    """benchmarks/soak.py: /proc/PID/smaps (proc(5)) gives each mapping's ``Rss:``; the split
    adds up to the process's RSS, and ``--chart-from`` draws one line per soak."""
    load("_svg")
    soak = load("soak")
    split = soak.rss_split_kib(os.getpid())
    assert set(split) == {"heap_kib", "anon_kib", "file_kib"}
    assert split["file_kib"] > 0  # the interpreter's own pages at least
    assert sum(split.values()) > 0.5 * soak.status_kib(os.getpid(), "VmRSS")
    files = []
    for label, rss in (("before", 90_000), ("after", 80_000)):
        path = tmp_path / f"{label}.json"
        samples = [{"minute": minute, "rss_kib": rss} for minute in (0, 1)]
        path.write_text(json.dumps({"samples": samples}))
        files.append(f"{label}={path}")
    chart = tmp_path / "soak.svg"
    assert soak.chart_from(",".join(files), chart) == 0
    root = ET.fromstring(chart.read_text())
    assert len(root.findall(f"{SVG}polyline")) == 2
    with pytest.raises(SystemExit, match="expected LABEL=JSON"):
        soak.chart_from("no-label.json", chart)
