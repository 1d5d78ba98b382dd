"""The Foo sample's webhook server, served from a thread, installed on the real apiserver.

``main.build_manager`` with ``--enable-webhooks`` builds the program's own manager; only its
webhook server runs here (on an event loop in a thread of its own, as in the controller
process), so tests can call the API server with a blocking client. The committed
``artifacts/crd.yaml`` and ``artifacts/webhooks.yaml`` are installed through
:class:`kubectrl.envtest.WebhookInstallOptions`, which rewrites their Service references to the
local server and waits until the API server calls it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import httpx
import pytest

from kubectrl.envtest import ControlPlane, WebhookInstallOptions
from kubectrl.webhook import WebhookServer

T = TypeVar("T")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sample_controller"
GROUP = "samplecontroller.k8s.io"
DEADLINE = 30.0


def _load(name: str, path: Path) -> ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sample() -> Iterator[dict[str, ModuleType]]:
    """The example's modules, importing each other by their plain names while tests run."""
    names = ("api", "controller", "webhooks")
    saved = {name: sys.modules.get(name) for name in names}
    try:
        modules = {}
        for name in names:
            alias = f"sample_{'webhooks' if name == 'webhooks' else 'controller'}_{name}"
            modules[name] = sys.modules[name] = _load(alias, EXAMPLE / f"{name}.py")
        modules["main"] = _load("sample_controller_main", EXAMPLE / "main.py")
        yield modules
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


class ThreadedServer:
    """A WebhookServer on an event loop in a background thread."""

    def __init__(self, server: WebhookServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="foo-webhook-server", daemon=True
        )

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def start(self) -> None:
        self.thread.start()
        self.call(self.server.start())

    def stop(self) -> None:
        try:
            self.call(self.server.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)
            self.loop.close()


@dataclass
class FooWebhooks:
    """What the tests use: the installed options (port, CA, cert dir) and the server."""

    install: WebhookInstallOptions
    server: WebhookServer
    control_plane: ControlPlane

    def http(self) -> httpx.Client:
        return self.control_plane.http_client()


def wait_for(what: str, check: Any, deadline: float = DEADLINE) -> Any:
    """``check()`` until it returns something truthy; AssertionError naming ``what`` after the
    deadline, with the last value or exception (no fixed sleeps: polls every 50 ms)."""
    end = time.monotonic() + deadline
    last: Any = None
    while True:
        try:
            value = check()
        except Exception as err:  # remembered, reported at the deadline
            value, last = None, err
        else:
            last = value
        if value:
            return value
        if time.monotonic() >= end:
            raise AssertionError(f"{what}: not within {deadline:g}s; last: {last!r}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def foo_webhooks(
    sample: dict[str, ModuleType],
    control_plane: ControlPlane,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[FooWebhooks]:
    api, webhooks, main = sample["api"], sample["webhooks"], sample["main"]
    install = WebhookInstallOptions(
        paths=[webhooks.WEBHOOKS_PATH],
        conversion_crds=[api.CRD_NAME],
        local_serving_cert_dir=str(tmp_path_factory.mktemp("foo-serving-certs")),
    ).prepare()
    args = main.parse_args(
        [
            "--enable-webhooks",
            f"--webhook-port={install.local_serving_port}",
            f"--webhook-cert-dir={install.local_serving_cert_dir}",
            "--metrics-bind-address=0",
        ]
    )
    manager = main.build_manager(args, kubeconfig=str(control_plane.kubeconfig.path))
    threaded = ThreadedServer(manager.webhook_server)
    threaded.start()
    control_plane.install_crds([api.CRD_PATH])
    try:
        install.install(control_plane)
        _wait_until_conversion_is_live(control_plane)
        yield FooWebhooks(install, manager.webhook_server, control_plane)
    finally:
        try:
            install.uninstall(control_plane)
        finally:
            threaded.stop()
            install.cleanup()


def _wait_until_conversion_is_live(control_plane: ControlPlane) -> None:
    """A dry-run create at v1beta1 comes back defaulted through v1alpha1 and back.

    The API server's custom-resource handler picks up a CRD's new conversion from its informer,
    a moment after the update; until then a v1beta1 object would be converted the old way. The
    defaulter sees v1alpha1 only, so ``spec.deployment.replicas: 1`` in the answer proves both
    conversions and the mutating webhook are live.
    """
    probe = {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "Foo",
        "metadata": {"name": "conversion-probe"},
        "spec": {"deployment": {"name": "conversion-probe"}},
    }

    def converted() -> bool:
        with control_plane.http_client() as http:
            answer = http.post(
                f"/apis/{GROUP}/v1beta1/namespaces/default/foos",
                params={"dryRun": "All"},
                json=probe,
            )
        spec = answer.json().get("spec") or {}
        return answer.status_code == 201 and spec == {
            "deployment": {"name": "conversion-probe", "replicas": 1}
        }

    wait_for("a v1beta1 Foo converted and defaulted by the webhooks", converted)
