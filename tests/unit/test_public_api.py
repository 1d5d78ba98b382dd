"""The public surface: every package's __all__ is sorted, complete and importable."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import warnings

import pytest

import kubectrl

from .api_surface import public_modules

PACKAGES = [
    "kubectrl",
    "kubectrl.admission",
    "kubectrl.apiserver",
    "kubectrl.apiserver.inprocess",
    "kubectrl.cache",
    "kubectrl.client",
    "kubectrl.client.interfaces",
    "kubectrl.client.metrics",
    "kubectrl.client.options",
    "kubectrl.client.pods",
    "kubectrl.conditions",
    "kubectrl.crd",
    "kubectrl.envtest",
    "kubectrl.envtest.pytest_plugin",
    "kubectrl.errors",
    "kubectrl.events",
    "kubectrl.kinds",
    "kubectrl.labels",
    "kubectrl.leaderelection",
    "kubectrl.models",
    "kubectrl.multicluster",
    "kubectrl.objects",
    "kubectrl.operator",
    "kubectrl.rbac",
    "kubectrl.resources",
    "kubectrl.runtime",
    "kubectrl.runtime.controllerutil",
    "kubectrl.runtime.handler",
    "kubectrl.runtime.log",
    "kubectrl.runtime.predicate",
    "kubectrl.runtime.sharding",
    "kubectrl.runtime.source",
    "kubectrl.testing",
    "kubectrl.webhook",
    "kubectrl.workqueue",
]


def test_every_public_module_is_listed_here() -> None:
    # A new public module (no part of its path starts with "_") is a deliberate addition to the
    # API: add it to PACKAGES (and the README's table); otherwise name it with a leading "_".
    assert sorted(PACKAGES) == public_modules()


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
    # Classes and functions defined in the module, or in its private modules (a package's), are
    # exported or named with a leading underscore; names it imports from elsewhere are not its.
    module = importlib.import_module(name)
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and getattr(value, "__module__", "") in (name, *_private_modules(name, value))
        and (isinstance(value, type) or callable(value))
    }
    assert public <= set(module.__all__), f"{name} defines public names not in __all__"


def _private_modules(name: str, value: object) -> tuple[str, ...]:
    home = str(getattr(value, "__module__", ""))
    return (home,) if home.startswith(f"{name}._") else ()


@pytest.mark.parametrize("name", PACKAGES)
def test_dir_lists_every_export(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) <= set(dir(module))


def test_importing_kubectrl_does_not_import_the_kubernetes_package() -> None:
    # kubernetes.client costs ~40 MB and ~0.5 s: import it lazily.
    code = "import sys, kubectrl; print('kubernetes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", [p for p in PACKAGES if p != "kubectrl"])
def test_exported_objects_report_their_public_module(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        home = getattr(value, "__module__", "")
        if (isinstance(value, type) or callable(value)) and home.startswith("kubectrl"):
            # Its own, or re-exported from the public module that defines it.
            assert home == name or (
                home in PACKAGES and getattr(importlib.import_module(home), attr, None) is value
            ), f"{name}.{attr} reports {home}"


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_callable_is_documented(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        value = getattr(module, attr)
        if callable(value) and getattr(value, "__module__", "").startswith("kubectrl"):
            assert getattr(value, "__doc__", None), f"{name}.{attr} has no docstring"


def test_top_level_names_are_imported_on_first_use() -> None:
    code = (
        "import sys, kubectrl\n"
        "before = 'kubectrl.runtime' in sys.modules\n"
        "from kubectrl import Manager\n"
        "import kubectrl.runtime\n"
        "print(before, Manager is kubectrl.runtime.Manager, 'kubectrl.runtime' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


def test_top_level_re_exports_are_the_subpackages_objects() -> None:
    for attr in kubectrl.__all__:
        value = getattr(kubectrl, attr)
        home = getattr(value, "__module__", "")
        if home.startswith("kubectrl.") and not home.startswith("kubectrl._"):
            assert getattr(importlib.import_module(home), attr) is value, attr


def test_subpackages_are_reachable_as_attributes() -> None:
    code = "import kubectrl; print(kubectrl.workqueue.RateLimitingQueue.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "RateLimitingQueue"


def test_an_unknown_name_is_an_attribute_error_naming_the_module() -> None:
    with pytest.raises(AttributeError, match="module 'kubectrl' has no attribute 'Nope'"):
        _ = kubectrl.Nope
    with pytest.raises(ImportError, match="Nope"):
        exec("from kubectrl.client import Nope")


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("kubectrl", "Client", "kubectrl.BlockingClient"),
        ("kubectrl.client", "Client", "kubectrl.client.BlockingClient"),
        ("kubectrl.client", "SyncWatchStream", "kubectrl.client.BlockingWatchStream"),
        ("kubectrl.client", "Reader", "kubectrl.client.interfaces.Reader"),
        ("kubectrl.client", "PatchOptions", "kubectrl.client.options.PatchOptions"),
        ("kubectrl.client", "ExecSession", "kubectrl.client.pods.ExecSession"),
        ("kubectrl.runtime", "generation_changed", "kubectrl.runtime.predicate.generation_changed"),
        ("kubectrl.runtime", "MapHandler", "kubectrl.runtime.handler.MapHandler"),
        ("kubectrl.runtime", "add_finalizer", "kubectrl.runtime.controllerutil.add_finalizer"),
        ("kubectrl.runtime", "KindSource", "kubectrl.runtime.source.KindSource"),
        ("kubectrl.runtime", "ShardingOptions", "kubectrl.runtime.sharding.ShardingOptions"),
        ("kubectrl.runtime", "merge_patch_diff", "kubectrl.client.merge_patch_diff"),
        ("kubectrl.apiserver", "AdmissionRequest", "kubectrl.apiserver.AdmissionAttributes"),
    ],
)
def test_old_names_still_work_with_a_deprecation_warning(module: str, old: str, new: str) -> None:
    package = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{old} is deprecated; use {new}"):
        value = getattr(package, old)
    new_module, _, new_name = new.rpartition(".")
    assert value is getattr(importlib.import_module(new_module), new_name)
    assert old not in package.__all__
    assert old not in dir(package)


@pytest.mark.parametrize("package", ["kubectrl.client", "kubectrl.runtime"])
def test_the_two_largest_packages_export_about_forty_names(package: str) -> None:
    # They grew to 69 and 66 names; the families moved to submodules named after what they hold
    # (controller-runtime's predicate, handler, source, controllerutil; the client's options,
    # pods and interfaces), each still importable from the old place with a warning.
    assert len(importlib.import_module(package).__all__) <= 40


def test_the_cache_building_blocks_are_at_the_top_level() -> None:
    for name in ("ListWatch", "Reflector", "Indexer", "Informer", "RateLimitingQueue"):
        assert name in kubectrl.__all__
        assert getattr(kubectrl, name) is not None


def test_from_import_of_an_old_name_warns_once_at_the_import() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec("from kubectrl.client import Client")
    assert [str(w.message) for w in caught] == [
        "kubectrl.client.Client is deprecated; use kubectrl.client.BlockingClient instead"
    ]


def test_type_checkers_see_every_top_level_name() -> None:
    # The lazy names are also imported under TYPE_CHECKING, so mypy and IDEs see real types.
    tree = ast.parse(inspect.getsource(kubectrl))
    checked: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    checked.update(alias.asname or alias.name for alias in stmt.names)
    assert set(kubectrl.__all__) <= checked
    lazy = vars(kubectrl)["_LAZY"]
    assert set(kubectrl.__all__) == {name for name, module in lazy.items() if module}
