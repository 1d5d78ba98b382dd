"""The public surface of kubectrl.client: sorted, complete, reported at its public path."""

from __future__ import annotations

import inspect
import subprocess
import sys

import kubectrl.client as client
from kubectrl.client import AsyncClient, BlockingClient, BlockingWatchStream, WatchStream


def test_all_is_sorted_and_resolves() -> None:
    assert client.__all__ == sorted(client.__all__, key=lambda n: (not n.isupper(), n))
    for name in client.__all__:
        assert hasattr(client, name), name


def test_public_objects_report_public_module() -> None:
    for name in client.__all__:
        obj = getattr(client, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "kubectrl.client", name


def test_blocking_twins_are_named_blocking() -> None:
    # Each blocking twin is Blocking<Name> (retry_on_conflict: retry_on_conflict_blocking).
    assert BlockingClient.__name__ == "BlockingClient"
    assert BlockingWatchStream.__name__ == "BlockingWatchStream"
    assert "retry_on_conflict_blocking" in client.__all__
    assert WatchStream.__name__ == "WatchStream"


def test_blocking_facade_has_the_same_verbs() -> None:
    def verbs(cls: type) -> set[str]:
        return {n for n, _ in inspect.getmembers(cls, callable) if not n.startswith("_")}

    assert verbs(AsyncClient) - {"aclose"} == verbs(BlockingClient) - {"close"}
    for name in verbs(BlockingClient) - {"close"}:
        sync_params = list(inspect.signature(getattr(BlockingClient, name)).parameters)
        async_params = list(inspect.signature(getattr(AsyncClient, name)).parameters)
        assert sync_params == async_params, name


def test_importing_the_client_does_not_import_kubernetes() -> None:
    code = "import sys, kubectrl.client; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
