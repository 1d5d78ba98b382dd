"""Webhooks served by the test process, called by the local control plane's apiserver.

controller-runtime's ``envtest.WebhookInstallOptions`` role: a CA and a serving certificate for
``127.0.0.1`` written as ``tls.crt``/``tls.key`` into a directory, a free port, and the webhook
configurations and CRD conversion stanzas rewritten to call ``https://127.0.0.1:<port><path>``
with that CA. The webhook server itself (``kubectrl.webhook``) is started by the caller with
that port and certificate directory; this module only works on dicts and the apiserver, so
envtest stays independent of the webhook library.

:meth:`WebhookInstallOptions.install` returns only when the apiserver really calls the server:
it installs a temporary configuration per webhook kind that points at the server's probe path
and makes dry-run requests until the apiserver answers with the probe's denial.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubectrl.envtest._certs import CertificateAuthority, KeyPair
from kubectrl.envtest._errors import ControlPlaneError

if TYPE_CHECKING:
    import httpx

    from kubectrl.client import ClientConfig
    from kubectrl.envtest._control_plane import ControlPlane

    #: Where to install: a running :class:`ControlPlane`, a ``ClientConfig``, or the path of a
    #: kubeconfig (e.g. the one ``python -m kubectrl.envtest start`` prints).
    Target = ControlPlane | ClientConfig | str | os.PathLike[str]

__all__ = ["PROBE_MESSAGE", "PROBE_PATH", "WebhookInstallOptions"]

#: The path every ``kubectrl.webhook.WebhookServer`` serves for this probe (its ``PROBE_PATH``).
PROBE_PATH = "/kubectrl-webhook-probe"
#: The denial message the server's probe path answers every AdmissionReview with.
PROBE_MESSAGE = "kubectrl webhook probe"

_PROBE_LABEL = "kubectrl.io/webhook-probe"
_ADMISSION = "/apis/admissionregistration.k8s.io/v1"
_PLURALS = {
    "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
}
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _serial(cert_pem: bytes) -> int:
    from cryptography import x509

    serial: int = x509.load_pem_x509_certificate(cert_pem).serial_number
    return serial


def _http(target: Target) -> httpx.Client:
    """A blocking client of the API server ``target`` names (admin for a control plane)."""
    if isinstance(target, (str, os.PathLike)):
        from kubectrl.client import load_kubeconfig

        return load_kubeconfig(os.fspath(target)).httpx_client()
    if hasattr(target, "http_client"):
        client: httpx.Client = target.http_client()
        return client
    return target.httpx_client()


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()
    if isinstance(body, dict):
        return str(body.get("message") or response.text.strip())
    return response.text.strip()


def _documents(paths: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[Path, dict[str, Any]]]:
    import yaml  # a dependency of the kubernetes package

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
        elif path.is_file():
            files = [path]
        else:
            raise ControlPlaneError(f"install webhooks: {path} does not exist")
        for file in files:
            try:
                documents = list(yaml.safe_load_all(file.read_text(encoding="utf-8")))
            except yaml.YAMLError as exc:
                raise ControlPlaneError(
                    f"install webhooks: {file} is not valid YAML: {exc}"
                ) from exc
            for doc in documents:
                if isinstance(doc, dict) and doc.get("kind") in _PLURALS:
                    yield file, doc


@dataclass
class WebhookInstallOptions:
    """Serve webhooks from the test process to a local :class:`ControlPlane`.

    ``configurations`` are ``MutatingWebhookConfiguration`` / ``ValidatingWebhookConfiguration``
    dicts as ``kubectrl.webhook.webhook_configurations`` generates them (``clientConfig.service``)
    and ``paths`` YAML/JSON files or directories holding more of them (other kinds are skipped);
    ``conversion_crds`` names installed CRDs whose conversion goes to the server's
    ``conversion_path``. :meth:`prepare` (called by :meth:`install` when needed) fills in
    ``local_serving_port``, ``local_serving_cert_dir`` and ``local_serving_ca_data``; start the
    webhook server with them, e.g. ``WebhookServerOptions(host=options.local_serving_host,
    port=options.local_serving_port, cert_dir=options.local_serving_cert_dir)``, then
    :meth:`install` (or ``await`` :meth:`install_async` when the server runs on the same event
    loop). :meth:`uninstall` removes what was installed and puts the CRDs' conversion back;
    :meth:`cleanup` removes a certificate directory :meth:`prepare` created.

    Example::

        >>> options = WebhookInstallOptions(local_serving_port=9443)
        >>> options.url("/validate-samplecontroller-k8s-io-v1alpha1-foo")
        'https://127.0.0.1:9443/validate-samplecontroller-k8s-io-v1alpha1-foo'
        >>> config = {"apiVersion": "admissionregistration.k8s.io/v1",
        ...           "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"},
        ...           "webhooks": [{"name": "vfoo.kb.io", "clientConfig": {"service": {
        ...               "name": "svc", "namespace": "ns", "path": "/validate-foo"}}}]}
        >>> options.local_serving_ca_data = b"CA"
        >>> options.rewrite(config)["webhooks"][0]["clientConfig"]
        {'url': 'https://127.0.0.1:9443/validate-foo', 'caBundle': 'Q0E='}
    """

    configurations: Sequence[Mapping[str, Any]] = ()
    paths: Sequence[str | os.PathLike[str]] = ()
    conversion_crds: Sequence[str] = ()
    conversion_path: str = "/convert"
    local_serving_host: str = "127.0.0.1"
    local_serving_port: int = 0
    local_serving_cert_dir: str = ""
    local_serving_ca_data: bytes = field(default=b"", repr=False)
    #: How long :meth:`install` waits for the apiserver to reach the server, in seconds.
    max_time: float = 30.0
    poll_interval: float = 0.1
    #: Namespace of the dry-run ConfigMaps of the probe (must exist; the apiserver makes it).
    probe_namespace: str = "default"

    _ca: CertificateAuthority | None = field(default=None, init=False, repr=False)
    _created_cert_dir: bool = field(default=False, init=False, repr=False)
    _installed: list[tuple[str, str]] = field(default_factory=list, init=False, repr=False)
    _saved_conversions: dict[str, dict[str, Any]] = field(
        default_factory=dict, init=False, repr=False
    )

    # -- local serving ------------------------------------------------------------------------

    def prepare(self) -> WebhookInstallOptions:
        """Pick a free port (unless set) and write a new CA's serving certificate; idempotent.

        A ``local_serving_ca_data`` set by the caller means its own CA signed the files in
        ``local_serving_cert_dir``: nothing is written then. The certificate is valid for
        ``localhost``, ``127.0.0.1`` and ``local_serving_host``; ``local_serving_ca_data`` is the
        CA (PEM) the apiserver is told to trust.
        """
        if not self.local_serving_port:
            self.local_serving_port = _free_port(self.local_serving_host)
        if self.local_serving_ca_data:
            return self  # prepared already, or the caller brings its own CA and cert dir
        if not self.local_serving_cert_dir:
            self.local_serving_cert_dir = tempfile.mkdtemp(prefix="kubectrl-webhook-certs-")
            self._created_cert_dir = True
        self._ca = CertificateAuthority("kubectrl-envtest-webhook-ca")
        self.local_serving_ca_data = self._ca.cert_pem
        self.renew_serving_cert()
        return self

    def renew_serving_cert(self) -> int:
        """Write a new serving certificate and key (same CA) into the cert dir; its serial.

        A server that watches its certificate files (``kubectrl.webhook.WebhookServer`` does)
        presents the new one from its next TLS handshake, and the apiserver still trusts it.
        """
        if self._ca is None:
            raise ControlPlaneError("renew_serving_cert: call prepare() first")
        hosts = {"localhost", "127.0.0.1", self.local_serving_host} - {""}
        ips: list[str] = []
        names: list[str] = []
        for host in sorted(hosts):
            try:
                socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
            except OSError:
                names.append(host)
            else:
                ips.append(host)
        pair = self._ca.issue("kubectrl-webhook", dns_names=names, ip_addresses=ips, server=True)
        self._write_pair(pair)
        return _serial(pair.cert_pem)

    def _write_pair(self, pair: KeyPair) -> None:
        directory = Path(self.local_serving_cert_dir)
        directory.mkdir(parents=True, exist_ok=True)
        # Each file is replaced in one rename, so a watcher never reads half a file.
        for name, data in (("tls.key", pair.key_pem), ("tls.crt", pair.cert_pem)):
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, directory / name)

    def url(self, path: str) -> str:
        """``https://<host>:<port><path>``, what the apiserver calls."""
        host = self.local_serving_host or "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"https://{host}:{self.local_serving_port}{path}"

    def _client_config(self, path: str) -> dict[str, Any]:
        return {
            "url": self.url(path),
            "caBundle": base64.b64encode(self.local_serving_ca_data).decode(),
        }

    def rewrite(self, configuration: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of a webhook configuration whose webhooks call the local server.

        ``clientConfig.service`` becomes ``url: https://<host>:<port><service.path>`` (a
        ``url`` keeps its path) and ``caBundle`` the local CA, as controller-runtime's
        ``ModifyWebhookDefinitions`` does; server-set metadata is dropped.
        """
        out = copy.deepcopy(dict(configuration))
        metadata = dict(out.get("metadata") or {})
        for key in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            metadata.pop(key, None)
        out["metadata"] = metadata
        name = metadata.get("name", "?")
        for hook in out.get("webhooks") or []:
            config = hook.get("clientConfig") or {}
            service = config.get("service")
            if service is not None:
                path = service.get("path") or "/"
            elif config.get("url"):
                from urllib.parse import urlsplit

                path = urlsplit(config["url"]).path or "/"
            else:
                raise ControlPlaneError(
                    f"install webhooks: {out.get('kind')} {name!r} webhook "
                    f"{hook.get('name')!r} has neither clientConfig.service nor clientConfig.url"
                )
            hook["clientConfig"] = self._client_config(path)
        return out

    def conversion(self) -> dict[str, Any]:
        """The CRD ``spec.conversion`` that sends conversions to the local server."""
        return {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": self._client_config(self.conversion_path),
                "conversionReviewVersions": ["v1"],
            },
        }

    # -- install ------------------------------------------------------------------------------

    def install(self, target: Target) -> None:
        """Install the configurations and conversions, then wait until the apiserver calls in.

        ``target`` is a :class:`ControlPlane`, a ``kubectrl.client.ClientConfig`` or a
        kubeconfig path, of an API server that can reach ``local_serving_host``. Blocking: the
        webhook server must run in another thread or process (with the server on the caller's
        event loop, ``await install_async(...)``). Raises :class:`ControlPlaneError` naming the
        URL when the apiserver still cannot reach the server after ``max_time`` seconds.
        """
        self.prepare()
        configurations = [self.rewrite(c) for c in self.configurations]
        configurations += [self.rewrite(doc) for _path, doc in _documents(self.paths)]
        with _http(target) as http:
            for configuration in configurations:
                self._apply(http, configuration)
            for name in self.conversion_crds:
                self._patch_conversion(http, name)
            kinds = {c["kind"] for c in configurations} or {"ValidatingWebhookConfiguration"}
            for kind in sorted(kinds):
                self._probe(http, kind)
            for name in self.conversion_crds:
                self._wait_conversion(http, name)

    async def install_async(self, target: Target) -> None:
        """:meth:`install` in a worker thread, for a server running on the caller's loop."""
        await asyncio.to_thread(self.install, target)

    def uninstall(self, target: Target) -> None:
        """Delete the installed configurations; put each CRD's previous conversion back."""
        with _http(target) as http:
            for kind, name in reversed(self._installed):
                response = http.delete(f"{_ADMISSION}/{_PLURALS[kind]}/{name}")
                if response.status_code not in (200, 202, 404):
                    raise ControlPlaneError(
                        f"uninstall webhooks: deleting {kind} {name!r}: HTTP "
                        f"{response.status_code}: {_message(response)}"
                    )
            self._installed.clear()
            for name, previous in list(self._saved_conversions.items()):
                # A JSON merge patch cannot drop keys it does not name: replace the stanza.
                patch = [{"op": "replace", "path": "/spec/conversion", "value": previous}]
                response = http.patch(
                    f"{_CRDS}/{name}",
                    json=patch,
                    headers={"Content-Type": "application/json-patch+json"},
                )
                if response.status_code not in (200, 404):
                    raise ControlPlaneError(
                        f"uninstall webhooks: restoring CRD {name!r} conversion: HTTP "
                        f"{response.status_code}: {_message(response)}"
                    )
                del self._saved_conversions[name]

    async def uninstall_async(self, target: Target) -> None:
        """:meth:`uninstall` in a worker thread."""
        await asyncio.to_thread(self.uninstall, target)

    def cleanup(self) -> None:
        """Remove the certificate directory if :meth:`prepare` created it."""
        if self._created_cert_dir and self.local_serving_cert_dir:
            shutil.rmtree(self.local_serving_cert_dir, ignore_errors=True)
            self._created_cert_dir = False

    def _apply(self, http: httpx.Client, configuration: dict[str, Any]) -> None:
        kind = configuration["kind"]
        name = configuration["metadata"].get("name")
        if not name:
            raise ControlPlaneError(f"install webhooks: a {kind} without metadata.name")
        collection = f"{_ADMISSION}/{_PLURALS[kind]}"
        response = http.post(collection, json=configuration)
        if response.status_code == 409:
            current = http.get(f"{collection}/{name}")
            if current.status_code == 200:
                configuration["metadata"]["resourceVersion"] = current.json()["metadata"][
                    "resourceVersion"
                ]
                response = http.put(f"{collection}/{name}", json=configuration)
        if response.status_code >= 400:
            raise ControlPlaneError(
                f"install webhooks: the apiserver refused {kind} {name!r} "
                f"(HTTP {response.status_code}): {_message(response)}"
            )
        if (kind, name) not in self._installed:
            self._installed.append((kind, name))

    def _patch_conversion(self, http: httpx.Client, name: str) -> None:
        current = http.get(f"{_CRDS}/{name}")
        if current.status_code != 200:
            raise ControlPlaneError(
                f"install webhooks: CRD {name!r} for conversion: HTTP {current.status_code}: "
                f"{_message(current)} (install the CRD first)"
            )
        spec = current.json()["spec"]
        self._saved_conversions.setdefault(name, spec.get("conversion") or {"strategy": "None"})
        patch = [{"op": "add", "path": "/spec/conversion", "value": self.conversion()}]
        response = http.patch(
            f"{_CRDS}/{name}", json=patch, headers={"Content-Type": "application/json-patch+json"}
        )
        if response.status_code != 200:
            raise ControlPlaneError(
                f"install webhooks: the apiserver refused the conversion of CRD {name!r} "
                f"(HTTP {response.status_code}): {_message(response)}"
            )

    def _probe_configuration(self, kind: str, name: str, token: str) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "probe.webhook.kubectrl.io",
                    "clientConfig": self._client_config(PROBE_PATH),
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["configmaps"],
                        }
                    ],
                    "objectSelector": {"matchLabels": {_PROBE_LABEL: token}},
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 5,
                }
            ],
        }

    def _probe(self, http: httpx.Client, kind: str) -> None:
        """Wait until the apiserver calls the server for a ``kind`` webhook.

        The probe configuration is created after the real ones; the apiserver reads each kind's
        configurations from one watch, in order, so once it calls the probe it also calls them.
        """
        token = secrets.token_hex(4)
        name = f"kubectrl-webhook-probe-{kind[: -len('WebhookConfiguration')].lower()}-{token}"
        collection = f"{_ADMISSION}/{_PLURALS[kind]}"
        response = http.post(collection, json=self._probe_configuration(kind, name, token))
        if response.status_code >= 400:
            raise ControlPlaneError(
                f"install webhooks: the apiserver refused the probe {kind} {name!r} "
                f"(HTTP {response.status_code}): {_message(response)}"
            )
        probe_object = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "generateName": "kubectrl-webhook-probe-",
                "labels": {_PROBE_LABEL: token},
            },
        }
        url = self.url(PROBE_PATH)
        last = "no answer yet"
        deadline = time.monotonic() + self.max_time
        try:
            while True:
                answer = http.post(
                    f"/api/v1/namespaces/{self.probe_namespace}/configmaps",
                    params={"dryRun": "All"},
                    json=probe_object,
                )
                last = f"HTTP {answer.status_code}: {_message(answer)}"
                if answer.status_code == 403 and PROBE_MESSAGE in _message(answer):
                    return
                if time.monotonic() >= deadline:
                    raise ControlPlaneError(
                        f"install webhooks: the apiserver did not call the webhook server at "
                        f"{url} within {self.max_time:g}s (is it serving with "
                        f"cert_dir={self.local_serving_cert_dir!r}?); last dry-run probe: {last}"
                    )
                time.sleep(self.poll_interval)
        finally:
            with contextlib.suppress(Exception):
                http.delete(f"{collection}/{name}")

    def _wait_conversion(self, http: httpx.Client, name: str) -> None:
        """Wait until reads at every non-storage version succeed (converting what is stored)."""
        deadline = time.monotonic() + self.max_time
        last = "no answer yet"
        while True:
            current = http.get(f"{_CRDS}/{name}")
            if current.status_code != 200:
                raise ControlPlaneError(
                    f"install webhooks: CRD {name!r} for conversion: HTTP {current.status_code}: "
                    f"{_message(current)}"
                )
            spec = current.json()["spec"]
            wanted = spec.get("conversion", {}).get("webhook", {}).get("clientConfig", {})
            ok = wanted.get("url") == self.url(self.conversion_path)
            for version in spec["versions"]:
                if not ok:
                    break
                if version.get("storage") or not version.get("served", True):
                    continue
                path = f"/apis/{spec['group']}/{version['name']}/{spec['names']['plural']}"
                answer = http.get(path, params={"limit": "50"})
                if answer.status_code != 200:
                    ok = False
                    last = f"GET {path}: HTTP {answer.status_code}: {_message(answer)}"
            if ok:
                return
            if time.monotonic() >= deadline:
                raise ControlPlaneError(
                    f"install webhooks: CRD {name!r} conversion through "
                    f"{self.url(self.conversion_path)} did not work within {self.max_time:g}s; "
                    f"last read: {last}"
                )
            time.sleep(self.poll_interval)
