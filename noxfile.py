"""Developer workflow: `nox -s tests`, `tests-unit`, `contract-1.35`, `contract-1.36`,
`contract-1.37`, `lint`, `typecheck`, `docs`, `demo`, `bench` (`nox -l` lists them)."""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
# The Pythons the classifiers in pyproject.toml claim; `tests-unit` runs on each.
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
PYPROJECT = nox.project.load_toml("pyproject.toml")


def install_group(session: nox.Session, group: str) -> None:
    """Installs a PEP 735 dependency group of pyproject.toml (any pip version)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, group))


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit and integration tests; builds (or finds) every control-plane binary first (etcd,
    kube-apiserver, and cluster mode's kube-controller-manager, kube-scheduler, kubectl, kwok)."""
    session.install("-e", ".[test]")
    # Resolve or build the control-plane binaries up front so the build's progress is visible
    # and is not charged to the first test's timeout.
    session.run("python", "-m", "kubectrl.envtest", "binaries")
    session.run("pytest", *session.posargs)


# The Kubernetes minors kubectrl.envtest runs (kubectrl.envtest.SUPPORTED_VERSIONS); `tests`
# (what CI runs) uses the default one, `contract-<minor>` runs the contract suite on each, with
# FakeAPI imitating that minor (FakeAPI(version=...)).
KUBERNETES_VERSIONS = ["1.35", "1.36", "1.37"]
# The default release of envtest, FakeAPI's tables and the built-in schemas
# (kubectrl.apiserver.KUBERNETES_VERSION).
TABLES_VERSION = "1.37"


def _contract(session: nox.Session, minor: str) -> None:
    env = {"KUBECTRL_ENVTEST_K8S_VERSION": minor}
    session.install("-e", ".[test]")
    session.run("python", "-m", "kubectrl.envtest", "binaries", env=env)
    session.run("pytest", "tests/contract", *session.posargs, env=env)


@nox.session(name="contract-1.35", python=PYTHON)
def contract_1_35(session: nox.Session) -> None:
    """The contract suite (FakeAPI against kube-apiserver) on Kubernetes 1.35."""
    _contract(session, "1.35")


@nox.session(name="contract-1.36", python=PYTHON)
def contract_1_36(session: nox.Session) -> None:
    """The contract suite (FakeAPI against kube-apiserver) on Kubernetes 1.36."""
    _contract(session, "1.36")


@nox.session(name="contract-1.37", python=PYTHON)
def contract_1_37(session: nox.Session) -> None:
    """The contract suite (FakeAPI against kube-apiserver) on Kubernetes 1.37."""
    _contract(session, "1.37")


@nox.session(name="tests-unit", python=PYTHONS)
def tests_unit(session: nox.Session) -> None:
    """The unit suite and the docstring examples (no control plane) on every supported Python."""
    session.install("-e", ".[test]")
    session.run("pytest", "tests/unit", "tests/typing", "src/kubectrl", *session.posargs)
    # The docs' blocks and the packaging checks, without the pages that need a control plane.
    session.run("pytest", "tests/docs", "-m", "not integration", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format check), import-linter's layer contracts, and the generated blocking
    client interfaces checked against their source (scripts/unasync.py --check)."""
    session.install("-e", ".")
    install_group(session, "lint")
    paths = ["src", "tests", "examples", "benchmarks", "scripts", "noxfile.py", "conftest.py"]
    session.run("ruff", "check", *paths)
    session.run("ruff", "format", "--check", *paths)
    session.run("lint-imports")
    # the blocking client interfaces are generated from the asyncio ones: fail when they drift
    session.run("python", "scripts/unasync.py", "--check")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the library and on the typing tests (tests/typing)."""
    session.install("-e", ".[test]")
    session.run("mypy")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site (MkDocs), built strict: a warning or a broken link fails it, and so
    does a page that would load anything from another host (the site works offline: its diagrams
    are drawn as SVG here, by the docs group's mmdr)."""
    session.install("-e", ".")
    install_group(session, "docs")
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The Foo sample controller on a local cluster (kwok nodes), shown with the real kubectl."""
    session.install("-e", ".[envtest]")
    session.run("python", "examples/sample_controller/demo.py", *session.posargs)


# Each benchmark is a script that prints its own table; add new ones here.
BENCHMARKS = [
    "benchmarks/bench_apiserver.py",
    "benchmarks/bench_import.py",
    "benchmarks/bench_models.py",
    "benchmarks/bench_read_your_writes.py",
    "benchmarks/bench_sharding.py",
    "benchmarks/bench_transport.py",
    "benchmarks/bench_typed.py",
    "benchmarks/bench_workqueue.py",
]


#: The Python peers of benchmarks/compare.py; one that cannot be installed is reported as skipped.
BENCH_PEERS = ["lightkube>=1.0,<2", "kopf>=1.45,<2"]
#: What benchmarks/bench_transport.py measures kubectrl's transport against (aiohttp itself is a
#: dependency of kubectrl).
BENCH_TRANSPORTS = ["httpx-aiohttp>=0.1", "uvloop>=0.19"]


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: figures to read and record, never pass/fail.

    benchmarks/compare.py runs kubectrl side by side with client-go, the Go sample-controller,
    the `kubernetes` client, lightkube and kopf on one local control plane (docs/performance.md);
    arguments after `--` go to it (e.g. `nox -s bench -- --rounds 3 --configmaps 2000`).
    """
    session.install("-e", ".[test,speedups]", *BENCH_TRANSPORTS)
    for peer in BENCH_PEERS:
        session.run("python", "-m", "pip", "install", "-q", peer, success_codes=[0, 1])
    session.run("python", "-m", "kubectrl.envtest", "binaries")
    session.run("python", "benchmarks/compare.py", *session.posargs)
    for script in BENCHMARKS:
        session.run("python", script)
