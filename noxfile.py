"""Developer workflow: `nox -s tests`, `lint`, `typecheck`, `demo`, `bench`."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit and integration tests; builds (or finds) etcd and kube-apiserver first."""
    session.install("-e", ".[test]")
    # Resolve or build the control-plane binaries up front so the build's progress is visible
    # and is not charged to the first test's timeout.
    session.run("python", "-m", "kubectrl.envtest", "binaries")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format check) and import-linter's layer contracts."""
    session.install("-e", ".[dev]")
    paths = ["src", "tests", "examples", "benchmarks", "noxfile.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    session.run("lint-imports")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the library and on the typing tests (tests/typing)."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The Foo sample controller on a local control plane: apply a Foo, show the result, stop."""
    session.install("-e", ".[envtest]")
    session.run("python", "examples/sample_controller/demo.py", *session.posargs)


# Each benchmark is a script that prints its own table; add new ones here.
BENCHMARKS = [
    "benchmarks/bench_typed.py",
    "benchmarks/bench_workqueue.py",
]


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: figures to read and record, never pass/fail."""
    session.install("-e", ".[test]")
    for script in BENCHMARKS:
        session.run("python", script)
