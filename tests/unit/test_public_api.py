"""The public surface: every package's __all__ is sorted, complete and importable."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "kubectrl",
    "kubectrl.cache",
    "kubectrl.client",
    "kubectrl.crd",
    "kubectrl.envtest",
    "kubectrl.events",
    "kubectrl.kinds",
    "kubectrl.labels",
    "kubectrl.leaderelection",
    "kubectrl.rbac",
    "kubectrl.resources",
    "kubectrl.runtime",
    "kubectrl.webhook",
    "kubectrl.workqueue",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)

    # ruff's (isort-style) order: CONSTANTS, then Classes, then functions, each alphabetical.
    def order(attr: str) -> tuple[int, str]:
        return (0 if attr.isupper() else 1 if attr[0].isupper() else 2, attr)

    assert exported == sorted(exported, key=order), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ has duplicates"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names {attr}, which does not exist"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and getattr(value, "__module__", "").startswith("kubectrl")
        and (isinstance(value, type) or callable(value))
    }
    assert public <= set(module.__all__), f"{name} defines public names not in __all__"


def test_importing_kubectrl_does_not_import_the_kubernetes_package() -> None:
    # kubernetes.client costs ~40 MB and ~0.5 s: import it lazily.
    import subprocess
    import sys

    code = "import sys, kubectrl; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", PACKAGES[1:])
def test_exported_objects_report_their_public_module(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if (isinstance(value, type) or callable(value)) and value.__module__.startswith("kubectrl"):
            assert value.__module__ == name, f"{name}.{attr} reports {value.__module__}"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_callable_is_documented(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value) and getattr(value, "__module__", "").startswith("kubectrl"):
            assert getattr(value, "__doc__", None), f"{name}.{attr} has no docstring"
