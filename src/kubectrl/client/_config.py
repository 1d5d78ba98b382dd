"""Client configuration: kubeconfig and in-cluster loading into a frozen :class:`ClientConfig`.

kubectrl reads kubeconfig files itself: every mistake is reported with the file and field at
fault, without echoing credential values. Certificate and key data stay in memory (never written
to a file that would outlive a SIGKILL), and exec credential plugins are run by kubectrl
(:mod:`kubectrl.client._exec`), so a plugin that is missing or fails raises
:class:`~kubectrl.errors.ConfigError` and its stderr never reaches a log. Only the deprecated
``auth-provider`` entries and the in-cluster loader go through the ``kubernetes`` package,
imported lazily because importing ``kubernetes.client`` costs about 40 MB and half a second.

Precedence in :func:`load_config` is controller-runtime's: an explicit path, then ``KUBECONFIG``,
then the in-cluster service account, then ``~/.kube/config``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import importlib
import os
import ssl
import urllib.parse
from collections.abc import Mapping
from typing import Any

import httpx

from kubectrl.client._exec import ExecCredentials, ExecPlugin, cluster_info
from kubectrl.client._pipeline import (
    BasicAuthCredentials,
    CredentialSource,
    KubeAuth,
    LoaderCredentials,
    StaticTokenCredentials,
    TokenFileCredentials,
)
from kubectrl.client._retry import RetryPolicy
from kubectrl.client._tls import ca_data_for_ssl, load_cert_chain_from_memory
from kubectrl.client._warnings import WarningHandler
from kubectrl.errors import ConfigError

__all__ = [
    "ClientConfig",
    "RateLimit",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
]

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
_USER_AGENT = "kubectrl/0.1"


@dataclasses.dataclass(frozen=True)
class RateLimit:
    """Client-side token bucket: ``qps`` requests per second, bursts of ``burst``.

    The default 20/30 is controller-runtime's. Pass ``rate_limit=None`` to a config to turn it off.

    Example::

        config = config.with_options(rate_limit=RateLimit(qps=50, burst=100))
    """

    qps: float = 20.0
    burst: int = 30


@dataclasses.dataclass(frozen=True)
class ClientConfig:
    """Everything needed to reach one API server as one user. Immutable.

    CA and client certificate/key come either as file *paths* (``ca_file``,
    ``client_cert_file``, ``client_key_file``) or as PEM/DER bytes kept in memory (``ca_data``,
    ``client_cert_data``, ``client_key_data``: a kubeconfig's ``*-data`` fields and exec plugin
    certificates), never written to disk. A credential source produces the ``Authorization``
    header per request. ``repr`` shows no secret.

    Defaults: TLS verified (``insecure_skip_tls_verify`` only when the kubeconfig says so); rate
    limit 20 QPS burst 30 (controller-runtime); at most 100 pooled connections for ordinary
    requests (watches use a separate, unbounded pool so they cannot starve them); 10 s connect
    timeout, 30 s read-idle timeout (``timeout``: no byte for that long), 120 s in all per
    attempt (``request_timeout``), 1 GiB per response body (``max_response_bytes``); a watch
    (or followed log) must get its response headers within ``watch_open_timeout`` = 45 s,
    connect included (what client-go's HTTP/2 health check
    effectively allows a silent connection: 30 s read-idle plus a 15 s ping); retries as
    :class:`RetryPolicy`.

    Example::

        config = load_kubeconfig(context="kind-kind")
        async with AsyncClient(config) as client:
            ...
    """

    server: str
    ca_file: str | None = None
    client_cert_file: str | None = None
    client_key_file: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy: str | None = None
    namespace: str = "default"
    source: str = ""
    credentials: CredentialSource | None = dataclasses.field(default=None, compare=False)
    rate_limit: RateLimit | None = dataclasses.field(default_factory=RateLimit)
    retry: RetryPolicy = dataclasses.field(default_factory=RetryPolicy)
    timeout: float = 30.0
    connect_timeout: float = 10.0
    #: Seconds one attempt of an ordinary (not watch, not streaming) request may take in all,
    #: however its bytes trickle in (``timeout`` bounds the silence between two reads);
    #: ``None``: no bound but the read-idle one.
    request_timeout: float | None = 120.0
    #: The largest response body the client reads, in bytes, counted after ``gzip`` is inflated
    #: (a 64 KiB gzip bomb cannot make it hold more); a bigger answer raises
    #: :class:`~kubectrl.errors.MalformedResponseError`.
    max_response_bytes: int = 1 << 30
    watch_open_timeout: float = 45.0
    max_connections: int = 100
    user_agent: str = _USER_AGENT
    #: The field manager of every write that names none (controller-runtime's
    #: ``client.WithFieldOwner``): required by server-side apply, sent as ``fieldManager`` by
    #: create, update and patch. ``None``: the server names the manager after the user agent.
    field_owner: str | None = None
    ca_data: bytes | None = dataclasses.field(default=None, repr=False)
    client_cert_data: bytes | None = dataclasses.field(default=None, repr=False)
    client_key_data: bytes | None = dataclasses.field(default=None, repr=False)
    #: An httpx async transport that replaces the network for requests and watches alike (used
    #: by :class:`kubectrl.testing.FakeAPI`); ``server`` is still required and names the base
    #: URL. The client calls only its public ``handle_async_request`` and ``aclose``; over
    #: httpx's own ``AsyncHTTPTransport`` every request carries ``Connection: close``
    #: (kubectrl.client._transport says why).
    transport: httpx.AsyncBaseTransport | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    #: Receives the server's warnings (``Warning`` response headers, client-go's
    #: ``WarningHandler``): :class:`~kubectrl.client.NoWarnings`,
    #: :class:`~kubectrl.client.WarningLogger`, :class:`~kubectrl.client.WarningRecorder`, ...;
    #: ``None`` logs each distinct warning once per process.
    warning_handler: WarningHandler | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not isinstance(self.server, str) or not self.server:
            raise ConfigError("is required (an http(s) URL like https://host:6443)", field="server")
        credentials: object = self.credentials  # typed, but a caller may pass anything
        if credentials is not None and not isinstance(credentials, CredentialSource):
            # The value itself is not shown: a token passed here by mistake stays secret.
            missing = [
                name
                for name in ("authorization", "invalidate")
                if not callable(getattr(credentials, name, None))
            ]
            if not hasattr(credentials, "blocking"):
                missing.append("blocking")
            raise ConfigError(
                f"a {type(credentials).__name__} is not a kubectrl.client.CredentialSource "
                f"(it has no {', '.join(missing)}); give an object with authorization(), "
                "invalidate() and blocking, e.g. for a token: load a kubeconfig, or write a "
                "small class (see CredentialSource)",
                field="credentials",
            )

    def with_options(self, **changes: Any) -> ClientConfig:
        """A copy with some fields changed (``dataclasses.replace``).

        Example: ``config.with_options(rate_limit=None, timeout=60)``.
        """
        return dataclasses.replace(self, **changes)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context: verified against ``ca_file``/``ca_data`` (or the system store), with
        the client certificate if any. Unverified only when ``insecure_skip_tls_verify`` is set.

        Raises :class:`~kubectrl.errors.ConfigError` naming the field when the CA or the client
        certificate/key cannot be loaded.
        """
        try:
            ctx = ssl.create_default_context(
                cafile=self.ca_file,
                cadata=ca_data_for_ssl(self.ca_data) if self.ca_data else None,
            )
        except (OSError, ssl.SSLError, ValueError) as err:
            raise ConfigError(
                f"cannot load the CA certificate: {type(err).__name__}",
                path=self.ca_file or self.source or None,
                field="ca_data" if self.ca_data else "ca_file",
            ) from None
        if self.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_data or self.client_key_data:
            try:
                load_cert_chain_from_memory(
                    ctx, self.client_cert_data or b"", self.client_key_data or b""
                )
            except (OSError, ssl.SSLError) as err:
                raise ConfigError(
                    f"cannot load client certificate/key: {type(err).__name__}",
                    path=self.source or None,
                    field="client_cert_data/client_key_data",
                ) from None
        elif self.client_cert_file:
            try:
                ctx.load_cert_chain(self.client_cert_file, self.client_key_file)
            except (OSError, ssl.SSLError) as err:
                raise ConfigError(
                    f"cannot load client certificate/key: {type(err).__name__}",
                    path=self.client_cert_file,
                    field="client-certificate",
                ) from None
        return ctx

    def auth(self) -> httpx.Auth | None:
        """The httpx ``Auth`` that applies :attr:`credentials` (``None`` without credentials)."""
        return KubeAuth(self.credentials) if self.credentials is not None else None

    def _httpx_kwargs(
        self, max_connections: int | None, timeout: float | None, *, transport: bool = False
    ) -> dict[str, Any]:
        read = self.timeout if timeout is None else timeout
        return {
            "base_url": self.server,
            # A transport (the testing fake) replaces the network: no TLS context to build.
            "verify": False if transport else self.ssl_context(),
            "auth": self.auth(),
            "proxy": self.proxy,
            "trust_env": False,
            "timeout": httpx.Timeout(read, connect=self.connect_timeout),
            "limits": httpx.Limits(
                max_connections=max_connections,
                max_keepalive_connections=min(20, max_connections or 20),
            ),
            # gzip only: what the apiserver compresses with, and what the client inflates
            # under its body limit (kubectrl.client._fast_transport.decode_body)
            "headers": {
                "User-Agent": self.user_agent,
                "Accept": "application/json",
                "Accept-Encoding": "gzip",
            },
        }

    def httpx_client(
        self, *, max_connections: int | None = None, timeout: float | None = None
    ) -> httpx.Client:
        """A blocking ``httpx.Client`` for this server, TLS and credentials.

        Example::

            with config.httpx_client() as http:
                http.get("/version").json()
        """
        return httpx.Client(**self._httpx_kwargs(max_connections or self.max_connections, timeout))

    def async_httpx_client(
        self, *, max_connections: int | None = None, timeout: float | None = None
    ) -> httpx.AsyncClient:
        """An ``httpx.AsyncClient`` for this server, TLS and credentials.

        ``max_connections=0`` means unbounded (used for the watch pool).

        Example::

            async with config.async_httpx_client() as http:
                (await http.get("/version")).json()
        """
        limit = self.max_connections if max_connections is None else (max_connections or None)
        kwargs = self._httpx_kwargs(limit, timeout, transport=self.transport is not None)
        if self.transport is not None:
            kwargs["transport"] = self.transport
        elif not self.proxy:
            # Direct connections use the client's own transport on asyncio's sockets and TLS
            # (kubectrl.client._fast_transport); a proxy goes through httpx's own transport,
            # which speaks the proxy protocols.
            from kubectrl.client._fast_transport import SetCookieJar, direct_transport

            kwargs["cookies"] = SetCookieJar()
            limits: httpx.Limits = kwargs["limits"]
            kwargs["transport"] = direct_transport(
                ssl_context=kwargs.pop("verify"),
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
            )
        return httpx.AsyncClient(**kwargs)

    def request_extensions(self) -> dict[str, Any]:
        """Per-request httpx extensions (SNI override from ``tls-server-name``)."""
        return {"sni_hostname": self.tls_server_name} if self.tls_server_name else {}


# --------------------------------------------------------------------------- kubeconfig


def _default_paths() -> tuple[list[str], str]:
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p], "KUBECONFIG"
    return [os.path.expanduser("~/.kube/config")], "default location"


def _read_yaml(path: str) -> dict[str, Any]:
    yaml: Any = importlib.import_module("yaml")  # PyYAML ships no type hints

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ConfigError("kubeconfig file does not exist", path=path) from None
    except OSError as err:
        raise ConfigError(f"cannot read kubeconfig: {err.strerror}", path=path) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        # Never str(err): PyYAML quotes the offending lines, which may hold a token.
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or "cannot parse"
        raise ConfigError(f"malformed YAML{where}: {problem}", path=path) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"malformed kubeconfig: top level is a {type(data).__name__}, not a mapping",
            path=path,
        )
    for key in ("clusters", "contexts", "users"):
        value = data.get(key)
        if value is not None and not isinstance(value, list):
            raise ConfigError("must be a list", path=path, field=key)
        for i, item in enumerate(value or ()):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise ConfigError("every entry needs a name", path=path, field=f"{key}[{i}]")
    return data


@dataclasses.dataclass
class _Entry:
    path: str
    value: dict[str, Any]


def _merge(files: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, dict[str, _Entry]], Any]:
    # kubectl's merge rule: the first file that defines a name (or current-context) wins.
    merged: dict[str, dict[str, _Entry]] = {"clusters": {}, "contexts": {}, "users": {}}
    current: Any = None
    for path, data in files:
        for key in merged:
            for item in data.get(key) or ():
                merged[key].setdefault(item["name"], _Entry(path, item))
        if current is None and data.get("current-context"):
            current = data["current-context"]
    return merged, current


def _resolve(base: str, value: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(base)), value))


def _check_file(entry: _Entry, section: str, body: Mapping[str, Any], key: str) -> None:
    value = body.get(key)
    if not value or body.get(f"{key}-data"):
        return
    if not isinstance(value, str):
        raise ConfigError(
            "must be a file path", path=entry.path, field=f"{section}[name={entry.value['name']}]"
        )
    resolved = _resolve(entry.path, value)
    if not os.path.isfile(resolved):
        name = entry.value["name"]
        raise ConfigError(
            f"file {resolved} does not exist",
            path=entry.path,
            field=f"{section}[name={name}].{section[:-1]}.{key}",
        )


def _check_data(entry: _Entry, section: str, body: Mapping[str, Any], key: str) -> bytes | None:
    value = body.get(key)
    if value is None:
        return None
    try:
        return base64.b64decode(str(value), validate=True) or None
    except (binascii.Error, ValueError):
        name = entry.value["name"]
        raise ConfigError(
            "is not valid base64",
            path=entry.path,
            field=f"{section}[name={name}].{section[:-1]}.{key}",
        ) from None


def _secret_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value) >= 4 else []
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _secret_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _secret_strings(v)]
    return []


def _redact(message: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        message = message.replace(secret, "<redacted>")
    return message


def load_kubeconfig(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]] | None = None,
    *,
    context: str | None = None,
) -> ClientConfig:
    """Load a :class:`ClientConfig` from kubeconfig file(s).

    ``path`` is one file, a list of files, or ``None`` for ``KUBECONFIG`` (several files joined
    with ``os.pathsep``, merged kubectl-style: the first definition of a name wins; files that do
    not exist are skipped, as kubectl does, unless none exists) or else ``~/.kube/config``.
    ``context`` defaults to the merged ``current-context``.

    Raises :class:`~kubectrl.errors.ConfigError` naming the file and field for: a missing file,
    malformed YAML, an unknown context/cluster/user, a missing ``server`` or one that is not an
    http(s) URL, a missing CA, client certificate, key or token file, bad base64 data, a CA that
    is not a certificate, a client certificate and key that do not load, or an exec credential
    plugin that is missing or fails (the plugin runs once here; its stderr is never shown).

    Example::

        config = load_kubeconfig("~/.kube/config", context="kind-kind")
    """
    if path is None:
        paths, origin = _default_paths()
        existing = [p for p in paths if os.path.exists(os.path.expanduser(p))]
        if not existing:
            raise ConfigError(
                f"no kubeconfig file found ({origin}: {os.pathsep.join(paths) or '<empty>'})"
            )
        paths = existing
    elif isinstance(path, list):
        paths = [os.fspath(p) for p in path]
    else:
        paths = [os.fspath(path)]
    paths = [os.path.expanduser(p) for p in paths]
    files = [(p, _read_yaml(p)) for p in paths]
    merged, current = _merge(files)
    where = ", ".join(paths)

    name = context or current
    if not name:
        raise ConfigError("not set, and no context was given", path=where, field="current-context")
    ctx_entry = merged["contexts"].get(name)
    if ctx_entry is None:
        known = ", ".join(sorted(merged["contexts"])) or "none"
        raise ConfigError(
            f"no context named {name!r} (known: {known})", path=where, field="contexts"
        )
    ctx = ctx_entry.value.get("context") or {}
    if not isinstance(ctx, dict):
        raise ConfigError(
            "must be a mapping", path=ctx_entry.path, field=f"contexts[name={name}].context"
        )
    cluster_name = ctx.get("cluster")
    cluster_entry = merged["clusters"].get(cluster_name) if isinstance(cluster_name, str) else None
    if cluster_entry is None:
        raise ConfigError(
            f"names cluster {cluster_name!r}, which no kubeconfig file defines",
            path=ctx_entry.path,
            field=f"contexts[name={name}].context.cluster",
        )
    cluster = cluster_entry.value.get("cluster") or {}
    if not isinstance(cluster, dict) or not cluster.get("server"):
        raise ConfigError(
            "is missing",
            path=cluster_entry.path,
            field=f"clusters[name={cluster_name}].cluster.server",
        )
    server = _check_server(cluster_entry, cluster)
    _check_file(cluster_entry, "clusters", cluster, "certificate-authority")
    ca_data = _check_data(cluster_entry, "clusters", cluster, "certificate-authority-data")
    ca_file = _path(cluster_entry, cluster, "certificate-authority") if ca_data is None else None
    insecure = bool(cluster.get("insecure-skip-tls-verify", False))
    _check_ca(cluster_entry, ca_file, ca_data)

    user_name = ctx.get("user")
    user_entry = merged["users"].get(user_name) if isinstance(user_name, str) else None
    user: dict[str, Any] = {}
    if user_name and user_entry is None:
        raise ConfigError(
            f"names user {user_name!r}, which no kubeconfig file defines",
            path=ctx_entry.path,
            field=f"contexts[name={name}].context.user",
        )
    cert_file = key_file = None
    cert_data = key_data = None
    credentials: CredentialSource | None = None
    if user_entry is not None:
        raw_user = user_entry.value.get("user") or {}
        if not isinstance(raw_user, dict):
            raise ConfigError(
                "must be a mapping", path=user_entry.path, field=f"users[name={user_name}].user"
            )
        user = raw_user
        for key in ("client-certificate", "client-key", "tokenFile"):
            _check_file(user_entry, "users", user, key)
        cert_data = _check_data(user_entry, "users", user, "client-certificate-data")
        key_data = _check_data(user_entry, "users", user, "client-key-data")
        if cert_data is None:
            cert_file = _path(user_entry, user, "client-certificate")
        if key_data is None:
            key_file = _path(user_entry, user, "client-key")
        if (cert_data is None) != (key_data is None):
            # One half inline, the other in a file: read the file so both stay in memory.
            cert_data = cert_data or _read_file(user_entry, "client-certificate", cert_file)
            key_data = key_data or _read_file(user_entry, "client-key", key_file)
            cert_file = key_file = None
        if user.get("exec"):
            source = ExecCredentials(
                ExecPlugin.from_kubeconfig(
                    user["exec"],
                    path=user_entry.path,
                    user=str(user_name),
                    cluster_info=cluster_info(cluster, ca_data),
                )
            )
            if source.credential.client_certificate and cert_data is None and cert_file is None:
                cert_data = source.credential.client_certificate
                key_data = source.credential.client_key
            credentials = source
        elif user.get("auth-provider"):
            credentials = _auth_provider(user_entry, str(user_name), name, cluster, user)
        elif user.get("token"):
            credentials = StaticTokenCredentials(str(user["token"]))
        elif user.get("tokenFile"):
            credentials = TokenFileCredentials(_resolve(user_entry.path, str(user["tokenFile"])))
        elif user.get("username") and user.get("password"):
            credentials = BasicAuthCredentials(str(user["username"]), str(user["password"]))
        if user_entry is not None and (cert_data or cert_file):
            _check_client_cert(user_entry, cert_file, key_file, cert_data, key_data)

    return ClientConfig(
        server=server,
        ca_file=ca_file,
        ca_data=ca_data,
        client_cert_file=cert_file,
        client_key_file=key_file,
        client_cert_data=cert_data,
        client_key_data=key_data,
        insecure_skip_tls_verify=insecure,
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy=cluster.get("proxy-url") or None,
        namespace=str(ctx.get("namespace") or "default"),
        source=f"kubeconfig {where} (context {name!r})",
        credentials=credentials,
    )


def _check_server(entry: _Entry, cluster: Mapping[str, Any]) -> str:
    # Rejected here rather than retried at the first request: a typo in the URL never heals.
    raw = cluster["server"]
    field = f"clusters[name={entry.value['name']}].cluster.server"
    if not isinstance(raw, str):
        raise ConfigError("must be a string (an http(s) URL)", path=entry.path, field=field)
    try:
        url = urllib.parse.urlsplit(raw.strip())
        port = url.port
    except ValueError:
        url, port = None, None
    if url is None or url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(
            f"{raw!r} is not an http(s) URL (like https://host:6443)",
            path=entry.path,
            field=field,
        )
    del port  # parsed only to reject a port that is not a number
    return raw.strip().rstrip("/")


def _path(entry: _Entry, body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return _resolve(entry.path, value) if isinstance(value, str) and value else None


def _read_file(entry: _Entry, key: str, path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise ConfigError(
            f"cannot read {path}: {err.strerror}",
            path=entry.path,
            field=f"users[name={entry.value['name']}].user.{key}",
        ) from None


def _check_ca(entry: _Entry, ca_file: str | None, ca_data: bytes | None) -> None:
    # Loaded once here so a CA that is not a certificate is reported with its file and field
    # now, instead of as a bare ssl.SSLError from the first request.
    if ca_file is None and ca_data is None:
        return
    try:
        ssl.create_default_context(
            cafile=ca_file, cadata=ca_data_for_ssl(ca_data) if ca_data else None
        )
    except (OSError, ssl.SSLError, ValueError):
        key = "certificate-authority-data" if ca_data is not None else "certificate-authority"
        raise ConfigError(
            "is not a PEM or DER CA certificate",
            path=entry.path,
            field=f"clusters[name={entry.value['name']}].cluster.{key}",
        ) from None


def _check_client_cert(
    entry: _Entry,
    cert_file: str | None,
    key_file: str | None,
    cert_data: bytes | None,
    key_data: bytes | None,
) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        if cert_data is not None or key_data is not None:
            load_cert_chain_from_memory(ctx, cert_data or b"", key_data or b"")
        elif cert_file is not None:
            ctx.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError):
        suffix = "-data" if cert_data is not None else ""
        raise ConfigError(
            "are not a PEM certificate and its matching private key",
            path=entry.path,
            field=f"users[name={entry.value['name']}].user.client-certificate{suffix}"
            f"/client-key{suffix}",
        ) from None


def _auth_provider(
    entry: _Entry,
    user_name: str,
    context: str,
    cluster: Mapping[str, Any],
    user: Mapping[str, Any],
) -> CredentialSource:
    # Deprecated upstream (client-go dropped gcp and azure in 1.26); kept through the kubernetes
    # package's loader, given only the server and the auth-provider entry, so it writes no
    # certificate or key to disk.
    k8s: Any = importlib.import_module("kubernetes.client")
    k8s_errors: Any = importlib.import_module("kubernetes.config.config_exception")
    kube_config: Any = importlib.import_module("kubernetes.config.kube_config")

    tree = {
        "current-context": context,
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
        "clusters": [{"name": "c", "cluster": {"server": cluster["server"]}}],
        "users": [{"name": "u", "user": {"auth-provider": user["auth-provider"]}}],
    }
    label = f"{entry.path}: users[name={user_name}]"
    root = kube_config.ConfigNode(label, tree, entry.path)
    configuration = type.__call__(k8s.Configuration)
    secrets = _secret_strings(user)
    try:
        loader = kube_config.KubeConfigLoader(
            config_dict=root, active_context=context, config_base_path=None
        )
        loader.load_and_set(configuration)
    except Exception as err:
        detail = _redact(str(err), secrets)
        if not isinstance(err, k8s_errors.ConfigException):
            detail = f"{type(err).__name__}: {detail}"
        raise ConfigError(
            f"auth-provider failed: {detail}",
            path=entry.path,
            field=f"users[name={user_name}].user.auth-provider",
        ) from None
    return LoaderCredentials(
        loader, configuration, describe=f"user={user_name!r}, context={context!r}"
    )


# --------------------------------------------------------------------------- in-cluster


def load_incluster_config(
    *,
    token_file: str = f"{SERVICE_ACCOUNT_DIR}/token",
    ca_file: str = f"{SERVICE_ACCOUNT_DIR}/ca.crt",
    namespace_file: str = f"{SERVICE_ACCOUNT_DIR}/namespace",
    environ: Mapping[str, str] | None = None,
) -> ClientConfig:
    """Load the pod's service-account configuration.

    Uses ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` and the mounted token and CA. The
    token file is re-read whenever it changes (the kubelet rotates projected tokens), so a
    long-running controller keeps working past the token's expiry. The namespace defaults to the
    pod's own.

    Example::

        config = load_incluster_config()
    """
    k8s: Any = importlib.import_module("kubernetes.client")
    k8s_errors: Any = importlib.import_module("kubernetes.config.config_exception")
    incluster: Any = importlib.import_module("kubernetes.config.incluster_config")

    env = os.environ if environ is None else environ
    configuration = type.__call__(k8s.Configuration)
    try:
        incluster.InClusterConfigLoader(
            token_filename=token_file, cert_filename=ca_file, try_refresh_token=False, environ=env
        ).load_and_set(configuration)
    except k8s_errors.ConfigException as err:
        raise ConfigError(
            f"in-cluster configuration unusable: {err}",
            path=f"{token_file}, {ca_file}",
            field="KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT, token, ca.crt",
        ) from None
    namespace = "default"
    try:
        with open(namespace_file, encoding="utf-8") as f:
            namespace = f.read().strip() or "default"
    except OSError:
        pass
    return ClientConfig(
        server=str(configuration.host).rstrip("/"),
        ca_file=ca_file,
        namespace=namespace,
        source="in-cluster service account",
        credentials=TokenFileCredentials(token_file),
    )


def load_config(
    path: str | os.PathLike[str] | None = None, *, context: str | None = None
) -> ClientConfig:
    """Find a configuration the way controller-runtime's ``GetConfig`` does.

    Order: ``path`` if given; else ``KUBECONFIG``; else in-cluster when
    ``KUBERNETES_SERVICE_HOST`` is set; else ``~/.kube/config``.

    Example::

        config = load_config()
    """
    if path is not None or os.environ.get("KUBECONFIG"):
        return load_kubeconfig(path, context=context)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and context is None:
        return load_incluster_config()
    return load_kubeconfig(None, context=context)
