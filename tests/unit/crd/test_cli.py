"""``python -m kubectrl crd``: prints or writes the CRD; exit 2 with one line on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectrl import crd
from kubectrl.__main__ import main

from . import sample_models

HERE = Path(__file__).parent


def test_prints_the_crd(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    assert main(["crd", "sample_models:Foo"]) == 0
    out = capsys.readouterr().out
    assert out == crd.to_yaml(crd.generate(sample_models.Foo))
    assert yaml.safe_load(out)["metadata"]["name"] == "foos.samplecontroller.k8s.io"


def test_writes_plural_dot_group_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    assert main(["crd", "sample_models:Foo", "--out", str(tmp_path / "out")]) == 0
    written = tmp_path / "out" / "foos.samplecontroller.k8s.io.yaml"
    assert written.read_text() == crd.to_yaml(crd.generate(sample_models.Foo))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_such_module_xyz:Foo", "cannot import 'no_such_module_xyz'"),
        ("sample_models:Nope", "has no attribute 'Nope'"),
        ("sample_models", "expected module.path:ClassName"),
        ("sample_models:NOT_A_MODEL", "is not a CustomResource subclass"),
        (
            "sample_models:Broken",
            "Broken.spec.child (field Loop.child): recursive type (Loop -> Loop)",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(
    spec: str, expected: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    assert main(["crd", spec]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert expected in lines[0]


def test_runs_as_a_module() -> None:
    """The real entry point, in a subprocess, importing from the working directory."""
    env = {**os.environ, "PYTHONPATH": ""}
    ok = subprocess.run(
        [sys.executable, "-m", "kubectrl", "crd", "sample_models:Foo"],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert yaml.safe_load(ok.stdout)["spec"]["names"]["plural"] == "foos"
    bad = subprocess.run(
        [sys.executable, "-m", "kubectrl", "crd", "sample_models:Missing"],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
