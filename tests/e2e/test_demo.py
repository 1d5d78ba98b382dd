"""The README's main command (`nox -s demo` runs this script) works from start to finish.

The demo runs the Foo controller against a LocalCluster (controller-manager, scheduler, kwok
nodes) and shows the real kubectl's output: the Foo's Pods become Running, its AVAILABLE column
follows, the garbage collector removes everything after the Foo is deleted. Its whole output,
the controller's log included, shows no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def blocks(out: str) -> list[tuple[str, list[str]]]:
    """``(command, output lines)`` for every ``$ kubectl ...`` the demo ran."""
    found: list[tuple[str, list[str]]] = []
    for line in out.splitlines():
        if line.startswith("$ kubectl "):
            found.append((line[len("$ kubectl ") :], []))
        elif found and not line.startswith("#"):
            found[-1][1].append(line)
    return [(command, [x for x in lines if x.strip()]) for command, lines in found]


def column(lines: list[str], header: str, row: str) -> str:
    """The value in column ``header`` of the table row whose first cell is ``row``."""
    names = lines[0].split()
    (values,) = [line.split() for line in lines[1:] if line.split()[:1] == [row]]
    return values[names.index(header)]


def test_demo_shows_real_kubectl_output_from_apply_to_garbage_collection() -> None:
    result = subprocess.run(
        [sys.executable, "examples/sample_controller/demo.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        check=False,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "Traceback" not in out + result.stderr, result.stderr
    ran = blocks(out)
    commands = [command for command, _ in ran]
    assert commands[:2] == [
        "get nodes",
        "apply -f examples/sample_controller/artifacts/example-foo.yaml",
    ]
    outputs = dict(ran[:2])
    assert [line.split()[:2] for line in outputs["get nodes"][1:]] == [
        [f"kwok-node-{i}", "Ready"] for i in range(3)
    ]
    assert outputs[commands[1]] == ["foo.samplecontroller.k8s.io/example-foo created"]

    get_foos = "get foos.v1alpha1.samplecontroller.k8s.io"
    assert commands[2].startswith(get_foos)
    foos = [lines for command, lines in ran if command.startswith(get_foos)]
    assert len(foos) == 2
    assert column(foos[0], "AVAILABLE", "example-foo") == "1"
    assert column(foos[1], "AVAILABLE", "example-foo") == "3"
    assert column(foos[1], "REPLICAS", "example-foo") == "3"

    workloads = [lines for command, lines in ran if command.startswith("get deployments,")]
    assert len(workloads) == 3

    def running_pods(lines: list[str]) -> list[str]:
        return [
            line
            for line in lines
            if line.startswith("pod/example-foo-") and line.split()[1:3] == ["1/1", "Running"]
        ]

    assert len(running_pods(workloads[0])) == 1
    assert len(running_pods(workloads[1])) == 3
    nodes = {line.split()[6] for line in running_pods(workloads[1])}  # -o wide: NODE
    assert nodes <= {f"kwok-node-{i}" for i in range(3)}
    assert any(
        line.startswith("deployment.apps/example-foo") and line.split()[1] == "3/3"
        for line in workloads[1]
    )
    assert any(line.startswith("replicaset.apps/example-foo-") for line in workloads[1])
    # After the Foo is deleted, the garbage collector leaves nothing.
    assert workloads[2] == ["No resources found in default namespace."]

    (events,) = [lines for command, lines in ran if command.startswith("get events")]
    reasons = {line.split()[2] for line in events[1:]}
    assert {"Synced", "ScalingReplicaSet", "SuccessfulCreate", "Scheduled"} <= reasons
    assert out.rstrip().endswith("# done: no process or temporary directory left behind")
