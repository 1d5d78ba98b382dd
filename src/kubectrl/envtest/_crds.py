"""Installing CustomResourceDefinitions and waiting until they are usable."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx

from kubectrl.envtest._errors import ControlPlaneError

__all__ = ["install_crds", "load_crds"]

_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
_POLL_SECONDS = 0.1  # controller-runtime's envtest polls every 100 ms


def _files(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
            )
            if not found:
                raise ControlPlaneError(f"install_crds: {path} has no .yaml, .yml or .json file")
            yield from found
        elif path.is_file():
            yield path
        else:
            raise ControlPlaneError(f"install_crds: {path} does not exist")


def load_crds(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, dict[str, Any]]]:
    """Read every CustomResourceDefinition in the given files and directories."""
    import yaml  # a dependency of the kubernetes package

    crds: list[tuple[Path, dict[str, Any]]] = []
    for path in _files(paths):
        try:
            documents = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError as exc:
            raise ControlPlaneError(f"install_crds: {path} is not valid YAML: {exc}") from exc
        found = [
            doc
            for doc in documents
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
        ]
        if not found:
            raise ControlPlaneError(f"install_crds: {path} holds no CustomResourceDefinition")
        for doc in found:
            if doc.get("apiVersion") != "apiextensions.k8s.io/v1":
                raise ControlPlaneError(
                    f"install_crds: {path}: CRD {doc.get('metadata', {}).get('name')!r} has "
                    f"apiVersion {doc.get('apiVersion')!r}; only apiextensions.k8s.io/v1 is served"
                )
            crds.append((path, doc))
    return crds


def _status_message(response: httpx.Response) -> str:
    try:
        return str(response.json().get("message") or response.text)
    except ValueError:
        return response.text


def _create_or_update(http: httpx.Client, path: Path, crd: dict[str, Any]) -> dict[str, Any]:
    name = crd["metadata"]["name"]
    response = http.post(_CRDS, json=crd)
    if response.status_code == 409:
        current = http.get(f"{_CRDS}/{name}")
        current.raise_for_status()
        updated = dict(crd)
        updated["metadata"] = {
            **crd["metadata"],
            "resourceVersion": current.json()["metadata"]["resourceVersion"],
        }
        response = http.put(f"{_CRDS}/{name}", json=updated)
    if response.status_code >= 400:
        raise ControlPlaneError(
            f"install_crds: {path}: the apiserver refused CRD {name!r} "
            f"(HTTP {response.status_code}): {_status_message(response)}"
        )
    result: dict[str, Any] = response.json()
    return result


def _established(crd: dict[str, Any]) -> bool:
    conditions = crd.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def _discoverable(http: httpx.Client, crd: dict[str, Any]) -> bool:
    spec = crd["spec"]
    plural = spec["names"]["plural"]
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        response = http.get(f"/apis/{spec['group']}/{version['name']}")
        if response.status_code != 200:
            return False
        names = {r.get("name") for r in response.json().get("resources", [])}
        if plural not in names:
            return False
    return True


def install_crds(
    http: httpx.Client, paths: Iterable[str | os.PathLike[str]], *, timeout: float = 10.0
) -> list[dict[str, Any]]:
    """Create or update each CRD, then wait until all are Established and discoverable."""
    created = [(path, _create_or_update(http, path, crd)) for path, crd in load_crds(paths)]
    deadline = time.monotonic() + timeout
    latest = {crd["metadata"]["name"]: (path, crd) for path, crd in created}
    pending = set(latest)
    while True:
        for name in sorted(pending):
            response = http.get(f"{_CRDS}/{name}")
            if response.status_code != 200:
                continue
            current = response.json()
            latest[name] = (latest[name][0], current)
            if _established(current) and _discoverable(http, current):
                pending.discard(name)
        if not pending:
            return [latest[crd["metadata"]["name"]][1] for _path, crd in created]
        if time.monotonic() >= deadline:
            details = "; ".join(
                f"{name} (from {latest[name][0]}): conditions {_conditions(latest[name][1])}"
                for name in sorted(pending)
            )
            raise ControlPlaneError(
                f"install_crds: not Established and discoverable within {timeout:.0f}s: {details}"
            )
        time.sleep(_POLL_SECONDS)


def _conditions(crd: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    conditions = crd.get("status", {}).get("conditions") or []
    return [(c.get("type"), c.get("status"), c.get("message")) for c in conditions]
