"""The sdist and the wheel carry what they should: the LICENSE, the package, the sdist's tests.

Builds both with hatchling (the build backend) into a temporary directory, as ``python -m
build`` would after setting up its isolated environment; about two seconds.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

pytest.importorskip("hatchling", reason="hatchling (the build backend) builds the dists")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


def _version() -> str:
    namespace: dict[str, str] = {}
    exec((ROOT / "src/kubectrl/_version.py").read_text(encoding="utf-8"), namespace)
    return namespace["__version__"]


def test_sdist_holds_what_its_tests_and_docs_need(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as sdist:
        names = sdist.getnames()
    top = {name.split("/", 2)[1] for name in names if name.count("/") >= 1}
    expected = {
        "LICENSE",
        "README.md",
        "CHANGELOG.md",
        "pyproject.toml",
        "noxfile.py",
        "conftest.py",
        "mkdocs.yml",
        "src",
        "tests",
        "docs",
        "examples",
        "benchmarks",
    }
    assert expected <= top, f"missing from the sdist: {sorted(expected - top)}"
    root = names[0].split("/", 1)[0]
    for path in (
        "src/kubectrl/py.typed",
        "src/kubectrl/envtest/_gomod/etcd/go.mod",
        "examples/sample_controller/artifacts/crd.yaml",
        "tests/conftest.py",
    ):
        assert f"{root}/{path}" in names, f"{path} is missing from the sdist"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_carries_the_license_the_package_and_its_data(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        names = wheel.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
        entry_points = wheel.read(metadata_name.replace("METADATA", "entry_points.txt")).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "kubectrl/py.typed" in names
    assert "kubectrl/envtest/_gomod/etcd/go.mod" in names
    assert not [n for n in names if n.startswith(("tests/", "docs/", "examples/"))]
    assert metadata["Version"] == _version()
    assert metadata["License-Expression"] == "Apache-2.0"
    assert "kubectrl = kubectrl.envtest.pytest_plugin" in entry_points
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert urls["Source"] == "https://github.com/kubectrl/kubectrl"


def test_classifiers_name_the_pythons_the_unit_suite_runs_on(dists: dict[str, Path]) -> None:
    """pyproject's classifiers, requires-python and noxfile's `tests-unit` Pythons agree."""
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        (metadata_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(wheel.read(metadata_name).decode())
    claimed = sorted(
        c.rsplit(" :: ", 1)[1]
        for c in metadata.get_all("Classifier")
        if c.startswith("Programming Language :: Python :: 3.")
    )
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    (line,) = [line for line in noxfile.splitlines() if line.startswith("PYTHONS = ")]
    tested = sorted(eval(line.split("=", 1)[1]))  # a literal list of strings
    assert claimed == tested
    assert metadata["Requires-Python"] == f">={tested[0]}"
