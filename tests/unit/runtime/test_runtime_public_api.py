"""The public surfaces of the packages added for issue 6."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["kubectrl.runtime", "kubectrl.events", "kubectrl.leaderelection"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_complete_and_public(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported)
    for attr in exported:
        value = getattr(module, attr)
        if isinstance(value, type):
            assert value.__module__ == name, f"{attr} reports {value.__module__}"
        assert getattr(value, "__doc__", None) or not callable(value), f"{attr} has no docstring"
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and getattr(value, "__module__", "").startswith("kubectrl")
        and (isinstance(value, type) or callable(value))
    }
    assert public <= set(exported)
