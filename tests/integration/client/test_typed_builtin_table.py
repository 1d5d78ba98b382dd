"""The committed table of built-in kinds equals the pinned API server's discovery.

Every resource the server serves whose kind has a ``kubernetes.client.models`` class is in
``kubectrl._builtin_kinds.BUILTIN_KINDS`` with the same group, version, plural and scope, and the
table holds nothing else. On a mismatch the test prints the correct table (the output of
``python -m kubectrl.client._kind_table KUBECONFIG``) to paste in.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kubernetes.client import models

from kubectrl import _builtin_kinds, kinds
from kubectrl._builtin_kinds import BUILTIN_KINDS
from kubectrl._builtin_schemas import classes
from kubectrl.apiserver import KUBERNETES_VERSION
from kubectrl.client import AsyncClient
from kubectrl.client._kind_table import discover_table, render_table

pytestmark = pytest.mark.integration


async def test_builtin_kinds_table_matches_discovery(client: AsyncClient) -> None:
    """The table is generated from the default release's server; an older supported release
    serves the rows whose classes its schema table has (what FakeAPI imitating it serves,
    ``kubectrl.apiserver._strategies.builtin_resources``), and nothing else."""
    discovered = await discover_table(client)
    version = str((await client.server_version()).get("gitVersion", ""))
    served = classes(version)
    expected = {name: row for name, row in BUILTIN_KINDS.items() if name in served}
    rendered = render_table(discovered, server_version=version)
    committed = await asyncio.to_thread(Path(_builtin_kinds.__file__).read_text)
    is_default = version == KUBERNETES_VERSION
    if discovered != expected or (is_default and rendered != committed):
        missing = sorted(set(discovered) - set(expected))
        extra = sorted(set(expected) - set(discovered))
        changed = sorted(n for n in set(discovered) & set(expected) if discovered[n] != expected[n])
        print(rendered)
        pytest.fail(
            f"src/kubectrl/_builtin_kinds.py differs from the server's discovery: missing "
            f"{missing}, extra {extra}, changed {changed}; the correct table is printed above"
        )
    # And kind_info answers from it for the real classes.
    for name, (group, version_, kind, plural, namespaced) in discovered.items():
        info = kinds.kind_info(getattr(models, name))
        assert (info.group, info.version, info.kind, info.plural, info.namespaced) == (
            group,
            version_,
            kind,
            plural,
            namespaced,
        )


async def test_every_table_kind_is_served_as_its_table_row_says(client: AsyncClient) -> None:
    # Through the client's own path (model class -> discovery), not the table's generator.
    for name in ("V1Deployment", "CoreV1Event", "EventsV1Event", "V1Namespace"):
        cls = getattr(models, name)
        res = await client.resource(cls)
        info = kinds.kind_info(cls)
        assert (res.group, res.version, res.kind, res.name, res.namespaced) == (
            info.group,
            info.version,
            info.kind,
            info.plural,
            info.namespaced,
        )
