"""FakeAPI imitates one chosen Kubernetes release: ``/version``, the built-in schemas, and the
check that its tables, the schemas and envtest's apiserver are the same release."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kubectrl import _builtin_schemas
from kubectrl.apiserver import KUBERNETES_VERSION, KUBERNETES_VERSIONS
from kubectrl.client import AsyncClient
from kubectrl.envtest import DEFAULT_VERSION, SUPPORTED_VERSIONS
from kubectrl.envtest._binaries import specs_for
from kubectrl.errors import BadRequestError, ResourceNotFoundError
from kubectrl.testing import FakeAPI, version_skew


def test_fakeapi_envtest_and_the_schemas_support_the_same_versions_and_default() -> None:
    assert tuple(KUBERNETES_VERSIONS) == SUPPORTED_VERSIONS == _builtin_schemas.VERSIONS
    assert DEFAULT_VERSION == _builtin_schemas.DEFAULT_VERSION == "1.37"
    assert KUBERNETES_VERSIONS[DEFAULT_VERSION] == KUBERNETES_VERSION
    assert FakeAPI().version == DEFAULT_VERSION


@pytest.mark.parametrize("minor", SUPPORTED_VERSIONS)
def test_no_skew_between_fakeapis_tables_the_schemas_and_envtests_apiserver(minor: str) -> None:
    """The release FakeAPI says, the release each schema table was generated from (its
    ``server``) and the kube-apiserver envtest pins (``_gomod/kubernetes-<minor>/go.mod``) are
    one release: a table regenerated from another patch, or a pin bumped alone, fails here."""
    pinned = specs_for(minor)[1].version()  # kube-apiserver's
    assert KUBERNETES_VERSIONS[minor] == pinned
    assert _builtin_schemas.server_version(minor) == pinned
    assert version_skew(pinned, minor).problems(models=False) == []
    assert FakeAPI(version=minor).server_version == pinned


def test_a_table_of_another_release_is_a_skew_named_per_component() -> None:
    skew = version_skew("v1.37.2", "1.36")
    assert skew.fake_api == skew.schemas == "v1.36.3"
    assert skew.problems(models=False) == [
        "FakeAPI's tables are v1.36.3, the apiserver is v1.37.2",
        "the schemas are v1.36.3, the apiserver is v1.37.2",
    ]


@pytest.mark.parametrize("minor", SUPPORTED_VERSIONS)
async def test_the_version_endpoint_says_the_chosen_release(minor: str) -> None:
    api = FakeAPI(version=f"{minor}.x")
    async with AsyncClient(api.config()) as client:
        info = await client.server_version()
    assert info["gitVersion"] == f"{KUBERNETES_VERSIONS[minor]}-fake"
    assert info["minor"] == minor.split(".")[1]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("1.34", r"Kubernetes 1\.34 is not supported .*choose one of 1\.35, 1\.36, 1\.37"),
        ("v1.37.1", r"Kubernetes v1\.37\.1: the API core's tables of 1\.37 are v1\.37\.2's"),
        ("latest", r"'latest' is not of the form 1\.37"),
    ],
)
def test_an_unsupported_version_is_refused_naming_the_supported_ones(
    version: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        FakeAPI(version=version)
    with pytest.raises(ValueError, match="not supported by FakeAPI's tables"):
        version_skew("v1.34.0", "1.34")


async def test_built_in_kinds_are_decoded_by_the_chosen_releases_schema() -> None:
    """``NodeSpec.podPreemptionPolicy`` is new in 1.37 (kubernetes staging/src/k8s.io/api/core/v1/
    types.go, in the OpenAPI of v1.37.2 and not of v1.36.3): a strict create names it as an
    unknown field on 1.36 only."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    node["spec"] = {"podPreemptionPolicy": {"disableResizePreemption": ["me"]}}
    async with AsyncClient(FakeAPI(version="1.36").config()) as client:
        with pytest.raises(BadRequestError, match=r'unknown field "spec\.podPreemptionPolicy"'):
            await client.create(node, field_validation="Strict")
    async with AsyncClient(FakeAPI(version="1.37").config()) as client:
        created = await client.create(node, field_validation="Strict")
    assert created["spec"]["podPreemptionPolicy"] == {"disableResizePreemption": ["me"]}


def test_the_schema_tables_load_lazily_and_each_on_its_own() -> None:
    """Importing kubectrl, its CRD generator and the testing kit decompresses no table; a
    FakeAPI of one release loads that release's table only."""
    code = (
        "import kubectrl, kubectrl.crd, kubectrl.testing\n"
        "from kubectrl import _builtin_schemas as s\n"
        "assert s._load.cache_info().currsize == 0, s._load.cache_info()\n"
        "kubectrl.testing.FakeAPI(version='1.35')\n"
        "assert s._load.cache_info().currsize == 1, s._load.cache_info()\n"
        "print(s.server_version('1.35'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "v1.35.4"


@pytest.mark.parametrize(("minor", "served"), [("1.35", False), ("1.36", True), ("1.37", True)])
async def test_a_kind_the_release_does_not_serve_is_not_served(minor: str, served: bool) -> None:
    """MutatingAdmissionPolicy reached admissionregistration.k8s.io/v1 in 1.36; kube-apiserver
    1.35 answers 404 for it (tests/contract/test_admission_policies.py asks it), and so does
    FakeAPI imitating 1.35: what a release serves comes from its schema table."""
    kind = ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy")
    async with AsyncClient(FakeAPI(version=minor).config()) as client:
        if served:
            assert (await client.list(kind))["items"] == []
        else:
            with pytest.raises(ResourceNotFoundError, match="MutatingAdmissionPolicy"):
                await client.list(kind)
