"""benchmarks/_gobuild.py edits upstream's sample-controller main.go in exactly two places (and
refuses a main.go it does not recognize); benchmarks/_svg.py draws every series it is given."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

UPSTREAM_MAIN = """\
func main() {
	cfg, err := clientcmd.BuildConfigFromFlags(masterURL, kubeconfig)
	kubeClient, err := kubernetes.NewForConfig(cfg)
	exampleClient, err := clientset.NewForConfig(cfg)
	if err = controller.Run(ctx, 2); err != nil {
		logger.Error(err, "Error running controller")
	}
}
"""


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_main_go_gets_the_limits_before_the_clientsets_and_the_worker_flag() -> None:
    edited = load("_gobuild").edit_main(UPSTREAM_MAIN)
    lines = edited.splitlines()
    limits = lines.index("\tcfg.QPS, cfg.Burst = float32(*benchQPS), *benchBurst")
    assert lines[limits + 1] == "\tkubeClient, err := kubernetes.NewForConfig(cfg)"
    assert "\tif err = controller.Run(ctx, *benchWorkers); err != nil {" in lines
    # Nothing else changed: removing the added line and undoing the worker edit gives upstream.
    del lines[limits]
    restored = "\n".join(lines) + "\n"
    assert restored.replace("*benchWorkers", "2") == UPSTREAM_MAIN


def test_a_main_go_without_the_expected_lines_is_refused() -> None:
    gobuild = load("_gobuild")
    moved = UPSTREAM_MAIN.replace("controller.Run(ctx, 2)", "controller.Run(ctx, workers)")
    with pytest.raises(RuntimeError, match=r"controller\.Run\(ctx, 2\).*found it 0 times"):
        gobuild.edit_main(moved)


def test_line_chart_draws_one_line_per_series_and_a_legend() -> None:
    svg = load("_svg").line_chart(
        "Initial sync: time per object",
        "ConfigMaps",
        "µs per object",
        {"kubectrl": [(10_000, 36.0), (50_000, 67.0)], "client-go": [(10_000, 18.0)]},
    )
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert len(root.findall("s:polyline", ns)) == 2
    assert len(root.findall("s:circle", ns)) == 3
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"kubectrl", "client-go", "50k", "Initial sync: time per object"} <= texts


def test_line_chart_without_points_names_the_chart() -> None:
    with pytest.raises(ValueError, match="'empty': no points"):
        load("_svg").line_chart("empty", "x", "y", {"kubectrl": []})


def test_busy_cores_reads_the_share_of_non_idle_ticks() -> None:
    """``/proc/stat``'s first line: user nice system idle iowait ... (proc(5)); idle and iowait
    ticks are the machine waiting, everything else is work."""
    load("_gobuild")
    load("_svg")
    load("_report")  # compare.py imports it; loaded here so the test passes run alone
    compare = load("compare")
    before = compare.cpu_ticks()
    assert before[0] >= before[1] > 0
    assert compare.busy_cores((1000, 600), (1200, 700), 2) == 1.0  # 100 busy of 200 ticks
    assert compare.busy_cores((1000, 600), (1200, 800), 2) == 0.0
    assert compare.busy_cores((1000, 600), (1000, 600), 2) == 0.0  # no tick between readings
