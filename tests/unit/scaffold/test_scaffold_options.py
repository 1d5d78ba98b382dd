"""``init --kubectrl-source PATH|URL`` (a project made from a checkout installs that checkout)
and the scaffolded manager's ``-v`` (kubectrl's and the project's debug logs, not httpcore's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scaffold_helpers import kubectrl as run_kubectrl
from scaffold_helpers import project_python

import kubectrl

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tests run on 3.11+
    tomllib = pytest.importorskip("tomli")

CHECKOUT = Path(kubectrl.__file__).resolve().parents[2]


def dependencies(root: Path) -> tuple[list[str], list[str], dict[str, object]]:
    data = tomllib.loads((root / "pyproject.toml").read_text())
    project = data["project"]
    metadata = data.get("tool", {}).get("hatch", {}).get("metadata", {})
    return project["dependencies"], project["optional-dependencies"]["test"], metadata


def test_a_checkout_path_becomes_a_file_url_direct_reference(tmp_path: Path) -> None:
    assert (CHECKOUT / "pyproject.toml").exists()
    done = run_kubectrl(tmp_path, "init", "guestbook", "--kubectrl-source", str(CHECKOUT))
    assert done.returncode == 0, done.stderr
    deps, test_deps, metadata = dependencies(tmp_path)
    url = CHECKOUT.as_uri()
    assert deps == [f"kubectrl[metrics] @ {url}"]
    assert test_deps == [f"kubectrl[test] @ {url}"]
    assert metadata == {"allow-direct-references": True}  # hatchling refuses them otherwise


def test_a_relative_path_is_resolved_and_a_vcs_url_kept(tmp_path: Path) -> None:
    relative = tmp_path / "rel"
    relative.mkdir()
    source = Path(*[".."] * len(relative.parts[1:])) / CHECKOUT.relative_to(CHECKOUT.anchor)
    done = run_kubectrl(relative, "init", "guestbook", f"--kubectrl-source={source}")
    assert done.returncode == 0, done.stderr
    assert dependencies(relative)[0] == [f"kubectrl[metrics] @ {CHECKOUT.as_uri()}"]

    vcs = tmp_path / "vcs"
    vcs.mkdir()
    url = "git+https://github.com/example/kubectrl@v0.1.0"
    done = run_kubectrl(vcs, "init", "guestbook", "--kubectrl-source", url)
    assert done.returncode == 0, done.stderr
    assert dependencies(vcs)[:2] == ([f"kubectrl[metrics] @ {url}"], [f"kubectrl[test] @ {url}"])


def test_without_a_source_the_index_release_is_required(tmp_path: Path) -> None:
    assert run_kubectrl(tmp_path, "init", "guestbook").returncode == 0
    deps, test_deps, metadata = dependencies(tmp_path)
    assert deps == [f"kubectrl[metrics]>={kubectrl.__version__}"]
    assert test_deps == [f"kubectrl[test]>={kubectrl.__version__}"]
    assert metadata == {}


def test_a_bad_source_is_refused_naming_it_and_nothing_is_written(tmp_path: Path) -> None:
    empty = tmp_path / "not-a-checkout"
    empty.mkdir()
    for source, message in (
        (str(empty), f"--kubectrl-source {str(empty)!r}: {empty / 'pyproject.toml'} cannot be"),
        ("ftp://example.com/kubectrl", "expected a path to a kubectrl checkout or a file://"),
    ):
        done = run_kubectrl(tmp_path, "init", "guestbook", "--kubectrl-source", source)
        assert done.returncode == 2
        assert message in done.stderr
    (empty / "pyproject.toml").write_text('[project]\nname = "other"\n')
    done = run_kubectrl(tmp_path, "init", "guestbook", "--kubectrl-source", str(empty))
    assert done.returncode == 2
    assert "is not kubectrl's" in done.stderr
    assert not (tmp_path / "PROJECT").exists()


LEVELS = """
import logging, sys
from guestbook.__main__ import configure_logging, parse_args
configure_logging(parse_args(sys.argv[1:]).verbose)
print(*[logging.getLogger(n).isEnabledFor(logging.DEBUG)
        for n in ("kubectrl.runtime", "guestbook.controllers", "httpcore.connection", "httpx")])
"""


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), "False False False False"),
        (("-v",), "True True False False"),
        (("-vv",), "True True True True"),
        (("-v", "-v"), "True True True True"),
    ],
)
def test_v_debugs_kubectrl_and_the_project_and_vv_every_library(
    tmp_path: Path, flags: tuple[str, ...], expected: str
) -> None:
    assert run_kubectrl(tmp_path, "init", "guestbook").returncode == 0
    done = project_python(tmp_path, "-c", LEVELS, *flags)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
