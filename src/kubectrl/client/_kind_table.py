"""Regenerate ``kubectrl._builtin_kinds`` from a live API server's discovery.

Every resource a server serves (all group-versions, not only the preferred ones; subresources
skipped) whose kind has a ``kubernetes.client.models`` class becomes one row: class name ->
``(group, version, kind, plural, namespaced)``. The class name is the package's convention,
``V<Version><Kind>`` (``V1Deployment``, ``V2HorizontalPodAutoscaler``), or with a group prefix
where two groups share a kind name (``CoreV1Event``, ``EventsV1Event``).

Usage::

    python -m kubectrl.client._kind_table KUBECONFIG > src/kubectrl/_builtin_kinds.py

The integration test ``tests/integration/client/test_typed_builtin_table.py`` compares the
committed table with the pinned API server's discovery and prints this output on a mismatch.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from kubectrl.client._async_client import AsyncClient
from kubectrl.client._config import load_kubeconfig
from kubectrl.client._discovery import parse_resource_list

__all__ = ["discover_table", "model_class_name", "render_table"]

Row = tuple[str, str, str, str, bool]


def _group_prefix(group: str) -> str:
    # The package prefixes colliding names with the group's first label: "" -> Core,
    # "events.k8s.io" -> Events, "admissionregistration.k8s.io" -> Admissionregistration.
    if not group:
        return "Core"
    first = group.split(".", 1)[0]
    return first[:1].upper() + first[1:]


def model_class_name(group: str, version: str, kind: str, names: set[str]) -> str | None:
    """The ``kubernetes.client.models`` class name for a kind, or ``None`` when it has none.

    The group-prefixed name wins: when it exists the plain one belongs to no kind (the package
    only prefixes names that collide).

    Example::

        >>> model_class_name("events.k8s.io", "v1", "Event", {"EventsV1Event", "CoreV1Event"})
        'EventsV1Event'
        >>> model_class_name("apps", "v1", "Deployment", {"V1Deployment"})
        'V1Deployment'
    """
    plain = version[:1].upper() + version[1:] + kind
    prefixed = _group_prefix(group) + plain
    if prefixed in names:
        return prefixed
    return plain if plain in names else None


async def discover_table(client: AsyncClient) -> dict[str, Row]:
    """Class name -> ``(group, version, kind, plural, namespaced)`` for what ``client``'s server
    serves and the installed ``kubernetes`` package has a model for."""
    import kubernetes.client.models as models

    names = {name for name in dir(models) if name[:1].isupper()}
    group_versions: list[tuple[str, str]] = []
    core = await client._discovery_get("/api")
    group_versions.extend(("", str(v)) for v in core.get("versions") or ())
    groups = await client._discovery_get("/apis")
    for group in groups.get("groups") or ():
        for entry in group.get("versions") or ():
            group_versions.append((str(group.get("name", "")), str(entry.get("version", ""))))
    table: dict[str, Row] = {}
    for group, version in group_versions:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        for res in parse_resource_list(await client._discovery_get(path), group, version):
            name = model_class_name(group, version, res.kind, names)
            if name is not None and name not in table:
                table[name] = (group, version, res.kind, res.name, res.namespaced)
    return dict(sorted(table.items()))


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def render_table(table: dict[str, Row], *, server_version: str = "") -> str:
    """The source of ``kubectrl/_builtin_kinds.py`` for ``table`` (already ruff-formatted)."""
    lines = [
        '"""Built-in kinds of the ``kubernetes.client.models`` classes (generated, do not edit).',
        "",
        "Class name -> ``(group, version, kind, plural, namespaced)`` for every resource the",
        f"pinned API server{' ' + server_version if server_version else ''} serves that has a "
        "model class. Regenerate with",
        "``python -m kubectrl.client._kind_table KUBECONFIG``; an integration test keeps it",
        "equal to the server's discovery.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "BUILTIN_KINDS: dict[str, tuple[str, str, str, str, bool]] = {",
    ]
    for name, row in table.items():
        # The layout ruff format gives (100 columns): one line, or one element per line.
        line = f"    {_quote(name)}: ({', '.join(_quote(v) for v in row)}),"
        if len(line) <= 100:
            lines.append(line)
        else:
            lines.append(f"    {_quote(name)}: (")
            lines.extend(f"        {_quote(v)}," for v in row)
            lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


async def _main(path: str) -> str:
    async with AsyncClient(load_kubeconfig(path)) as client:
        version: Any = (await client.server_version()).get("gitVersion", "")
        return render_table(await discover_table(client), server_version=str(version))


def main(argv: list[str] | None = None) -> int:
    """``python -m kubectrl.client._kind_table KUBECONFIG``: print the table module."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m kubectrl.client._kind_table KUBECONFIG\n")
        return 2
    sys.stdout.write(asyncio.run(_main(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
