"""The public surface of kubectrl.client: sorted, complete, reported at its public path."""

from __future__ import annotations

import inspect
import subprocess
import sys

import kubectrl.client as client
from kubectrl.client import AsyncClient, Client


def test_all_is_sorted_and_resolves() -> None:
    assert client.__all__ == sorted(client.__all__, key=lambda n: (not n.isupper(), n))
    for name in client.__all__:
        assert hasattr(client, name), name


def test_public_objects_report_public_module() -> None:
    for name in client.__all__:
        obj = getattr(client, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "kubectrl.client", name


def test_blocking_facade_has_the_same_verbs() -> None:
    def verbs(cls: type) -> set[str]:
        return {n for n, _ in inspect.getmembers(cls, callable) if not n.startswith("_")}

    assert verbs(AsyncClient) - {"aclose"} == verbs(Client) - {"close"}
    for name in verbs(Client) - {"close"}:
        sync_params = list(inspect.signature(getattr(Client, name)).parameters)
        async_params = list(inspect.signature(getattr(AsyncClient, name)).parameters)
        assert sync_params == async_params, name


def test_importing_the_client_does_not_import_kubernetes() -> None:
    code = "import sys, kubectrl.client; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
