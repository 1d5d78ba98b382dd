"""The contract suite: every case runs against the real kube-apiserver and against FakeAPI.

The ``target`` fixture is parametrised over ``["real", "fake"]``:

* ``real``: the local control plane of the pytest plugin (etcd + kube-apiserver, no
  kube-controller-manager), or its cluster mode for ``needs_cluster`` cases. One namespace is
  shared by the cases of a module (names are unique per case); the CRD these cases use is
  installed once per session.
* ``fake``: a fresh :class:`kubectrl.testing.FakeAPI` per case, imitating the control plane's
  Kubernetes version (``KUBECTRL_ENVTEST_K8S_VERSION``, default envtest's ``DEFAULT_VERSION``;
  ``nox -s contract-1.35`` sets it): the real server is its reference only when both are the
  same release, so a real server of another release fails the case.

The real parametrisation carries the ``integration`` mark: ``pytest tests/contract -m "not
integration"`` runs the fake half alone (no processes, a few seconds).

Marks (registered here, one-line reasons: the docs' known-differences table is generated from
them):

* ``known_difference("reason")``: the fake does not implement the behaviour. On the fake the
  case must fail with a clear ``NotImplementedError`` (``kubectrl.testing.UnsupportedFeatureError``
  is one) naming the feature; silently doing something else fails the case.
* ``fake_only("reason")``: the test environment cannot show the behaviour; the real
  parametrisation is skipped. A difference of the test environment, not of the fake (unused
  since the garbage-collection cases run on the cluster mode).
* ``fake_xfail("reason")``: a fake bug still open; the fake parametrisation is
  ``xfail(strict=True)``.
* ``needs_cluster("reason")``: the behaviour comes from a controller (the garbage collector):
  the real parametrisation runs on the session's envtest ``LocalCluster`` (with
  kube-controller-manager), in a namespace of its own, instead of the plain control plane.
  Such cases wait for the outcome (``eventually``): controllers act asynchronously.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from contract_helpers import Target, kubernetes_minor, unique

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.testing import FakeAPI, version_skew

if TYPE_CHECKING:
    from kubectrl.envtest import ControlPlane


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "known_difference(reason): FakeAPI does not implement this; on the fake the case must "
        "raise a clear NotImplementedError naming the feature",
    )
    config.addinivalue_line(
        "markers",
        "fake_only(reason): the test environment cannot show this behaviour; the real "
        "parametrisation is skipped",
    )
    config.addinivalue_line(
        "markers", "fake_xfail(reason): a FakeAPI bug still open; xfail(strict=True) on the fake"
    )
    config.addinivalue_line(
        "markers",
        "needs_cluster(reason): the real parametrisation runs on the envtest LocalCluster "
        "(controllers run there)",
    )


def _target_param(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("target") if callspec is not None else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _target_param(item) != "fake":
            continue
        mark = item.get_closest_marker("fake_xfail")
        if mark is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"FakeAPI: {mark.args[0]}"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    mark = item.get_closest_marker("known_difference")
    if mark is None or _target_param(item) != "fake":
        return (yield)
    reason = mark.args[0]
    try:
        yield
    except NotImplementedError as exc:  # UnsupportedFeatureError is one
        if not str(exc).strip():
            pytest.fail(
                f"known difference ({reason}): the fake raised {type(exc).__name__} without "
                "naming the feature",
                pytrace=False,
            )
        return None
    pytest.fail(
        f"known difference ({reason}): the fake was expected to raise NotImplementedError "
        "naming the feature, but the case ran without it",
        pytrace=False,
    )


# ---------------------------------------------------------------------------------- fixtures

_REAL_CRDS: dict[str, str] = {}
_CLUSTER_CRDS: dict[str, str] = {}


@pytest.fixture(scope="module")
def real_module_namespace(
    kubectrl_control_plane: ControlPlane, request: pytest.FixtureRequest
) -> Iterator[str]:
    """One namespace shared by a module's real-server cases (names in it are unique)."""
    stem = re.sub(r"[^a-z0-9]+", "-", request.module.__name__.split(".")[-1].lower())
    name = f"{stem[:40].strip('-')}-{secrets.token_hex(3)}"
    with kubectrl_control_plane.http_client() as http:
        response = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        if response.status_code != 201:
            pytest.fail(f"creating namespace {name}: HTTP {response.status_code} {response.text}")
    yield name
    with kubectrl_control_plane.http_client() as http:
        http.delete(f"/api/v1/namespaces/{name}")


def _refuse_version_skew(control_plane: ControlPlane) -> None:
    """FakeAPI imitates the control plane's release; a server whose ``/version`` is another
    release than FakeAPI's tables and schemas is not a reference (the comparison would be
    between two releases, not between FakeAPI and its reference)."""
    problems = version_skew(control_plane.server_version, control_plane.version).problems(
        models=False
    )
    if problems:
        pytest.fail(
            "the contract suite compares FakeAPI with a real apiserver of the same release; "
            + "; ".join(problems),
            pytrace=False,
        )


@pytest.fixture(params=[pytest.param("real", marks=pytest.mark.integration), "fake"])
async def target(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Target]:
    """The API server under contract, ``real`` or ``fake``."""
    if request.param == "real":
        mark = request.node.get_closest_marker("fake_only")
        if mark is not None:
            pytest.skip(f"test environment: {mark.args[0]}")
        cluster = request.node.get_closest_marker("needs_cluster") is not None
        if cluster:
            control_plane: ControlPlane = request.getfixturevalue("kubectrl_cluster")
        else:
            control_plane = request.getfixturevalue("kubectrl_control_plane")
        _refuse_version_skew(control_plane)
        config = load_kubeconfig(control_plane.kubeconfig.path).with_options(rate_limit=None)
        async with AsyncClient(config) as client:
            if cluster:
                namespace = unique("contract")
                await client.create(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
                )
            else:
                namespace = request.getfixturevalue("real_module_namespace")
            t = Target(
                "real",
                client,
                namespace,
                control_plane=control_plane,
                tmp_path=tmp_path,
                crd_cache=_CLUSTER_CRDS if cluster else _REAL_CRDS,
            )
            if cluster:
                t.delete_namespace_after(namespace)
            try:
                yield t
            finally:
                await t.cleanup()
        return
    api = FakeAPI(version=kubernetes_minor())
    namespace = unique("contract")
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    async with AsyncClient(api.config()) as client:
        yield Target("fake", client, namespace, api=api, tmp_path=tmp_path, crd_cache={})
