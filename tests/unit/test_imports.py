"""What each entry point imports: its own layer and the layers below it, never more.

The layers are the import-linter contracts of pyproject.toml: the foundations (errors, objects,
labels, kinds, ...), then the client, then cache | workqueue | leaderelection | events | webhook,
then the runtime; testing, envtest and apiserver sit beside them and nothing in the library
imports them. ``import kubectrl`` itself imports nothing but its version: every name it
re-exports is imported on first use, so a script that only wants a client never pays for the
controller runtime (nor pydantic, aiohttp, yaml, prometheus_client or the kubernetes package).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LAYERS_ABOVE_CLIENT = (
    "kubectrl.cache",
    "kubectrl.events",
    "kubectrl.leaderelection",
    "kubectrl.runtime",
    "kubectrl.webhook",
    "kubectrl.workqueue",
)
BESIDE = ("kubectrl.apiserver", "kubectrl.envtest", "kubectrl.testing")
TYPED = ("kubectrl.resources", "kubectrl.crd", "kubectrl.conditions")
#: Heavy third-party packages no entry point below the runtime should import at import time:
#: pydantic (typed resources, ~0.1 s), aiohttp (the webhook server, on start), yaml
#: (kubeconfig, on load), prometheus_client (metrics, with a registry), kubernetes (models,
#: ~0.5 s and 40 MB).
HEAVY = ("pydantic", "aiohttp", "yaml", "prometheus_client", "kubernetes")


def _others(*keep: str) -> tuple[str, ...]:
    return tuple(m for m in (*LAYERS_ABOVE_CLIENT, *BESIDE, *TYPED) if m not in keep)


#: entry point -> (kubectrl packages it must not load, third-party packages it must not load)
PINS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "kubectrl.errors": (("kubectrl.client", *_others()), (*HEAVY, "httpx")),
    "kubectrl.objects": (("kubectrl.client", *_others()), (*HEAVY, "httpx")),
    "kubectrl.labels": (("kubectrl.client", *_others()), (*HEAVY, "httpx")),
    "kubectrl.kinds": (("kubectrl.client", *_others()), (*HEAVY, "httpx")),
    "kubectrl.client": (_others(), HEAVY),
    "kubectrl.workqueue": (("kubectrl.client", *_others("kubectrl.workqueue")), (*HEAVY, "httpx")),
    "kubectrl.cache": (_others("kubectrl.cache"), HEAVY),
    "kubectrl.events": (_others("kubectrl.events"), HEAVY),
    "kubectrl.leaderelection": (_others("kubectrl.leaderelection"), HEAVY),
    "kubectrl.webhook": (_others("kubectrl.webhook"), HEAVY),
    "kubectrl.runtime": ((*BESIDE, *TYPED), HEAVY),
    "kubectrl.envtest": (
        (*LAYERS_ABOVE_CLIENT, "kubectrl.client", "kubectrl.testing", "kubectrl.apiserver"),
        HEAVY,
    ),
}


def _loaded(statement: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def _under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for p in packages if m == p or m.startswith(p + "."))


def test_import_kubectrl_loads_only_the_package_and_its_version() -> None:
    loaded = _loaded("import kubectrl")
    assert sorted(m for m in loaded if m.startswith("kubectrl")) == [
        "kubectrl",
        "kubectrl._internal",
        "kubectrl._internal.exports",
        "kubectrl._version",
    ]
    assert _under(loaded, (*HEAVY, "httpx")) == []


@pytest.mark.parametrize("entry", sorted(PINS))
def test_an_entry_point_loads_its_layer_and_below(entry: str) -> None:
    forbidden, heavy = PINS[entry]
    loaded = _loaded(f"import {entry}")
    assert entry in loaded
    assert _under(loaded, forbidden) == [], f"import {entry} loads layers it does not need"
    assert _under(loaded, heavy) == [], f"import {entry} loads heavy packages it does not need"


def test_a_top_level_name_loads_its_layer_only() -> None:
    loaded = _loaded("from kubectrl import AsyncClient, load_config")
    assert _under(loaded, _others()) == []
    loaded = _loaded("from kubectrl import RateLimitingQueue")
    assert _under(loaded, ("kubectrl.client", *_others("kubectrl.workqueue"))) == []


def test_typed_resources_load_pydantic_on_first_use_only() -> None:
    assert "pydantic" not in _loaded("import kubectrl, kubectrl.client")
    assert "pydantic" in _loaded("from kubectrl import CustomResource")
