"""Client configuration: kubeconfig and in-cluster loading into a frozen :class:`ClientConfig`.

Loading goes through the ``kubernetes`` package's loaders (exec plugins, auth providers,
``*-data`` fields written to private temp files), imported lazily because importing
``kubernetes.client`` costs about 40 MB and half a second. Before handing a kubeconfig to that
loader we check it ourselves, so every mistake is reported with the file and field at fault, and
without echoing credential values (the loader's own messages can quote a whole ``users`` entry).

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
from collections.abc import Mapping
from typing import Any

import httpx

from kubectrl.client._auth import (
    BasicAuthCredentials,
    CredentialSource,
    KubeAuth,
    LoaderCredentials,
    StaticTokenCredentials,
    TokenFileCredentials,
)
from kubectrl.client._retry import RetryPolicy
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

    Fields hold file *paths* for CA and client certificate/key (data from a kubeconfig is written
    to private temp files by the ``kubernetes`` loader) and a credential source that produces the
    ``Authorization`` header per request. ``repr`` shows no secret.

    Defaults: TLS verified (``insecure_skip_tls_verify`` only when the kubeconfig says so); rate
    limit 20 QPS burst 30 (controller-runtime); at most 100 pooled connections for ordinary
    requests (watches use a separate, unbounded pool so they cannot starve them); 30 s request
    timeout, 10 s connect timeout; retries as :class:`RetryPolicy`.

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
    max_connections: int = 100
    user_agent: str = _USER_AGENT

    def with_options(self, **changes: Any) -> ClientConfig:
        """A copy with some fields changed (``dataclasses.replace``).

        Example: ``config.with_options(rate_limit=None, timeout=60)``.
        """
        return dataclasses.replace(self, **changes)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context: verified against ``ca_file`` (or the system store), with the client
        certificate if any. Unverified only when ``insecure_skip_tls_verify`` is set."""
        ctx = ssl.create_default_context(cafile=self.ca_file)
        if self.insecure_skip_tls_verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.client_cert_file:
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

    def _httpx_kwargs(self, max_connections: int | None, timeout: float | None) -> dict[str, Any]:
        read = self.timeout if timeout is None else timeout
        return {
            "base_url": self.server,
            "verify": self.ssl_context(),
            "auth": self.auth(),
            "proxy": self.proxy,
            "trust_env": False,
            "timeout": httpx.Timeout(read, connect=self.connect_timeout),
            "limits": httpx.Limits(
                max_connections=max_connections,
                max_keepalive_connections=min(20, max_connections or 20),
            ),
            "headers": {"User-Agent": self.user_agent, "Accept": "application/json"},
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
        return httpx.AsyncClient(**self._httpx_kwargs(limit, timeout))

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


def _check_data(entry: _Entry, section: str, body: Mapping[str, Any], key: str) -> None:
    value = body.get(key)
    if value is None:
        return
    try:
        base64.b64decode(str(value), validate=True)
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
    malformed YAML, an unknown context/cluster/user, a missing ``server``, a missing CA, client
    certificate, key or token file, bad base64 data, or a credential the loader rejects.

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
    _check_file(cluster_entry, "clusters", cluster, "certificate-authority")
    _check_data(cluster_entry, "clusters", cluster, "certificate-authority-data")

    user_name = ctx.get("user")
    user_entry = merged["users"].get(user_name) if isinstance(user_name, str) else None
    user: dict[str, Any] = {}
    if user_name and user_entry is None:
        raise ConfigError(
            f"names user {user_name!r}, which no kubeconfig file defines",
            path=ctx_entry.path,
            field=f"contexts[name={name}].context.user",
        )
    if user_entry is not None:
        raw_user = user_entry.value.get("user") or {}
        if not isinstance(raw_user, dict):
            raise ConfigError(
                "must be a mapping", path=user_entry.path, field=f"users[name={user_name}].user"
            )
        user = raw_user
        for key in ("client-certificate", "client-key", "tokenFile"):
            _check_file(user_entry, "users", user, key)
        for key in ("client-certificate-data", "client-key-data"):
            _check_data(user_entry, "users", user, key)

    secrets = _secret_strings(user)
    loader, configuration = _run_loader(files, merged, name, secrets, where)

    credentials: CredentialSource | None
    if user.get("exec") or user.get("auth-provider"):
        credentials = LoaderCredentials(
            loader, configuration, describe=f"user={user_name!r}, context={name!r}"
        )
    elif user.get("token"):
        credentials = StaticTokenCredentials(str(user["token"]))
    elif user.get("tokenFile") and user_entry is not None:
        credentials = TokenFileCredentials(_resolve(user_entry.path, str(user["tokenFile"])))
    elif user.get("username") and user.get("password"):
        credentials = BasicAuthCredentials(str(user["username"]), str(user["password"]))
    else:
        credentials = None

    server = str(getattr(configuration, "host", "") or cluster["server"]).rstrip("/")
    insecure = bool(cluster.get("insecure-skip-tls-verify", False))
    return ClientConfig(
        server=server,
        ca_file=getattr(configuration, "ssl_ca_cert", None) or None,
        client_cert_file=getattr(configuration, "cert_file", None) or None,
        client_key_file=getattr(configuration, "key_file", None) or None,
        insecure_skip_tls_verify=insecure,
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy=cluster.get("proxy-url") or None,
        namespace=str(ctx.get("namespace") or "default"),
        source=f"kubeconfig {where} (context {name!r})",
        credentials=credentials,
    )


def _run_loader(
    files: list[tuple[str, dict[str, Any]]],
    merged: dict[str, dict[str, _Entry]],
    context: str,
    secrets: list[str],
    where: str,
) -> tuple[Any, Any]:
    # Imported here (about 40 MB, half a second), and as untyped modules.
    k8s: Any = importlib.import_module("kubernetes.client")
    k8s_errors: Any = importlib.import_module("kubernetes.config.config_exception")
    kube_config: Any = importlib.import_module("kubernetes.config.kube_config")

    # Our own ConfigNodes, named by file and entry name: the loader's merger names nodes after
    # the entry's whole dict, so its error messages could quote a token.
    tree: dict[str, Any] = {"current-context": context}
    for key, entries in merged.items():
        tree[key] = [
            kube_config.ConfigNode(f"{e.path}: {key}[name={n}]", e.value, e.path)
            for n, e in entries.items()
        ]
    root = kube_config.ConfigNode(where, tree, files[0][0])
    configuration = type.__call__(k8s.Configuration)
    try:
        loader = kube_config.KubeConfigLoader(
            config_dict=root, active_context=context, config_base_path=None
        )
        loader.load_and_set(configuration)
    except k8s_errors.ConfigException as err:
        raise ConfigError(
            _redact(str(err), secrets), path=where, field=f"context {context}"
        ) from None
    except Exception as err:
        raise ConfigError(
            f"credential plugin or loader failed: {type(err).__name__}: "
            + _redact(str(err), secrets),
            path=where,
            field=f"context {context}",
        ) from None
    return loader, configuration


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
