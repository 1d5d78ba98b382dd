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
from kubectrl.client import AsyncClient
from kubectrl.client._kind_table import discover_table, render_table

pytestmark = pytest.mark.integration


async def test_builtin_kinds_table_matches_discovery(client: AsyncClient) -> None:
    discovered = await discover_table(client)
    version = (await client.server_version()).get("gitVersion", "")
    rendered = render_table(discovered, server_version=str(version))
    committed = await asyncio.to_thread(Path(_builtin_kinds.__file__).read_text)
    if discovered != BUILTIN_KINDS or rendered != committed:
        missing = sorted(set(discovered) - set(BUILTIN_KINDS))
        extra = sorted(set(BUILTIN_KINDS) - set(discovered))
        changed = sorted(
            n for n in set(discovered) & set(BUILTIN_KINDS) if discovered[n] != BUILTIN_KINDS[n]
        )
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
