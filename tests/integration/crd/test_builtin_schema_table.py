"""The committed table of built-in schemas equals the pinned API server's OpenAPI v3.

``kubectrl/_builtin_schemas-v1.<minor>.json.gz`` of the envtest apiserver's minor
(``KUBECTRL_ENVTEST_K8S_VERSION``) is regenerated here from it with the same code as ``python -m
kubectrl._builtin_schemas_gen KUBECONFIG``; on a mismatch the test writes the correct file (gzipped)
in the test's temporary directory and says where, to copy in.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path

import pytest

from kubectrl._builtin_schemas import table_file
from kubectrl._builtin_schemas_gen import build_table, fetch_definitions, render_table
from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.testing import eventually

DATA = Path(__file__).resolve().parents[2] / "data" / "crds"

pytestmark = pytest.mark.integration


async def test_the_committed_table_is_what_the_server_publishes(
    kubectrl_control_plane: ControlPlane, kubeconfig: Path, tmp_path: Path
) -> None:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as client:
        version = str((await client.server_version()).get("gitVersion", ""))
        definitions = await fetch_definitions(client)
    table = build_table(definitions, server_version=version)
    rendered = render_table(table)
    name = table_file(kubectrl_control_plane.version)
    committed = gzip.decompress(resources.files("kubectrl").joinpath(name).read_bytes()).decode()
    if rendered != committed:
        old = json.loads(committed)
        out = tmp_path / name
        out.write_bytes(gzip.compress(rendered.encode(), 9, mtime=0))
        changed = sorted(
            name
            for name in set(old["definitions"]) | set(table["definitions"])
            if old["definitions"].get(name) != table["definitions"].get(name)
        )
        pytest.fail(
            f"src/kubectrl/{name} differs from the OpenAPI of {version} "
            f"(was {old['server']}): {len(changed)} definitions differ, e.g. {changed[:5]}; "
            f"the regenerated file is {out}"
        )
    # The table covers the types operators embed.
    for name in ("V1PodTemplateSpec", "V1JobTemplateSpec", "V1Condition", "V1ObjectReference"):
        assert name in table["classes"]


async def test_the_table_leaves_out_the_groups_of_installed_crds(
    kubectrl_control_plane: ControlPlane, kubeconfig: Path
) -> None:
    """A server that has run tests serves CRD groups too: their types are not built in (the
    session's other tests install such CRDs in any order, which once made the comparison above
    depend on test order)."""
    kubectrl_control_plane.install_crds([DATA / "widgets.yaml"])
    async with AsyncClient(load_kubeconfig(kubeconfig)) as client:

        async def published() -> bool:
            index = await client._discovery_get("/openapi/v3")
            return "apis/test.kubectrl.dev/v1" in (index.get("paths") or {})

        # The OpenAPI index takes the CRD in asynchronously, after it is Established.
        await eventually(published, timeout=30)
        definitions = await fetch_definitions(client)
    assert not [name for name in definitions if name.startswith("dev.kubectrl.test.")]
    assert "io.k8s.api.core.v1.PodTemplateSpec" in definitions
