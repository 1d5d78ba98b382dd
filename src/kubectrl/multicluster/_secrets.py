"""Providers over a management cluster: kubeconfig Secrets, and Cluster Inventory API profiles.

- :class:`SecretProvider`: multicluster-runtime's kubeconfig provider
  (``providers/kubeconfig/provider.go``: Secrets labelled
  ``sigs.k8s.io/multicluster-runtime-kubeconfig=true`` in one namespace, the kubeconfig under
  ``data.kubeconfig``, the cluster named after the Secret), and Cluster API's kubeconfig Secrets
  (:meth:`SecretProvider.cluster_api`: ``<cluster>-kubeconfig``, key ``value``, labelled
  ``cluster.x-k8s.io/cluster-name``).
- :class:`ClusterProfileProvider`: the Cluster Inventory API's ``ClusterProfile``
  (``providers/cluster-inventory-api``: a profile whose ``ControlPlaneHealthy`` condition is
  ``True`` is engaged as ``<namespace>/<name>``, with the kubeconfig from the one Secret labelled
  ``x-k8s.io/cluster-inventory-consumer=<consumer>`` and ``x-k8s.io/cluster-profile=<name>``,
  key ``Config``, the "secret" kubeconfig strategy). The access-provider strategy (exec plugins
  named by the profile's status) is refused.

Every kubeconfig here is untrusted (:func:`load_untrusted_kubeconfig`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

from kubectrl.cache import Informer, InformerFactory
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.errors import ConfigError, ResourceNotFoundError
from kubectrl.multicluster._kubeconfig import KubeconfigPolicy, load_untrusted_kubeconfig
from kubectrl.multicluster._provider import Aware, DesiredCluster, DesiredStateProvider, fingerprint

__all__ = [
    "CLUSTER_PROFILE",
    "ClusterProfileProvider",
    "SecretProvider",
]

#: The Cluster Inventory API's kind (sigs.k8s.io/cluster-inventory-api, apis/v1alpha1).
CLUSTER_PROFILE = ("multicluster.x-k8s.io/v1alpha1", "ClusterProfile")
_SECRET = ("v1", "Secret")
_MCR_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig"
_CAPI_LABEL = "cluster.x-k8s.io/cluster-name"
_CONSUMER_LABEL = "x-k8s.io/cluster-inventory-consumer"
_PROFILE_LABEL = "x-k8s.io/cluster-profile"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _secret_kubeconfig(secret: Mapping[str, Any], key: str) -> tuple[str, bytes]:
    """(source name, decoded bytes) of ``data[key]``; ConfigError naming the Secret and key."""
    meta = _meta(secret)
    source = f"secret {meta.get('namespace', '')}/{meta.get('name', '')}"
    data = secret.get("data") or {}
    value = data.get(key) if isinstance(data, Mapping) else None
    if not value:
        keys = ", ".join(sorted(data)) if isinstance(data, Mapping) and data else "none"
        raise ConfigError(f"has no kubeconfig (keys: {keys})", path=source, field=f"data.{key}")
    try:
        return source, base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError("is not valid base64", path=source, field=f"data.{key}") from None


class _InformerProvider(DesiredStateProvider):
    """Runs informers on the management cluster; any event wakes the desired-state loop."""

    def __init__(self, client: AsyncClient, namespace: str, sync_timeout: float) -> None:
        super().__init__()
        if not namespace:
            raise ValueError(f"{type(self).__name__}: namespace is required")
        self.client = client
        self.namespace = namespace
        self.sync_timeout = sync_timeout
        self._factory = InformerFactory(client, namespace=namespace)
        self._changed = asyncio.Event()

    def _wake(self, *_: Any) -> None:
        self._changed.set()

    async def _informer(self, kind: tuple[str, str], selector: str | None) -> Informer:
        informer = await self._factory.get_informer(
            kind, namespace=self.namespace, label_selector=selector
        )
        informer.add_handler(on_add=self._wake, on_update=self._wake, on_delete=self._wake)
        return informer

    async def _setup(self) -> None:
        raise NotImplementedError

    async def run(self, aware: Aware) -> None:
        await self._setup()
        self._factory.start()
        try:
            await self._factory.wait_for_cache_sync(self.sync_timeout, raise_on_failure=True)
            await super().run(aware)
        finally:
            await self._factory.shutdown()

    async def wait_for_change(self) -> None:
        await self._changed.wait()
        self._changed.clear()


class SecretProvider(_InformerProvider):
    """Clusters from kubeconfig Secrets in one namespace of the management cluster.

    Defaults are multicluster-runtime's kubeconfig provider: Secrets labelled
    ``sigs.k8s.io/multicluster-runtime-kubeconfig=true``, the kubeconfig under ``data.kubeconfig``,
    the cluster named after the Secret. ``name_of`` maps a Secret to its cluster name (``None``:
    not a cluster Secret). A Secret without the key, with bad base64 or a refused kubeconfig
    (:class:`KubeconfigPolicy`) is reported in :attr:`errors` and the log, naming the Secret and
    the field.

    Example::

        provider = SecretProvider(management_client, "fleet")
        provider = SecretProvider.cluster_api(management_client, "default")
    """

    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        *,
        label_selector: str = f"{_MCR_LABEL}=true",
        key: str = "kubeconfig",
        name_of: Callable[[Mapping[str, Any]], str | None] | None = None,
        policy: KubeconfigPolicy | None = None,
        sync_timeout: float = 60.0,
    ) -> None:
        super().__init__(client, namespace, sync_timeout)
        self.label_selector = label_selector
        self.key = key
        self.policy = policy if policy is not None else KubeconfigPolicy()
        self._name_of = name_of if name_of is not None else (lambda s: _meta(s).get("name"))
        self._secrets: Informer | None = None

    @classmethod
    def cluster_api(
        cls,
        client: AsyncClient,
        namespace: str,
        *,
        policy: KubeconfigPolicy | None = None,
        sync_timeout: float = 60.0,
    ) -> SecretProvider:
        """Cluster API's kubeconfig Secrets: ``<cluster>-kubeconfig`` labelled
        ``cluster.x-k8s.io/cluster-name=<cluster>``, key ``value``; the cluster is named
        ``<cluster>``."""

        def name_of(secret: Mapping[str, Any]) -> str | None:
            meta = _meta(secret)
            cluster = (meta.get("labels") or {}).get(_CAPI_LABEL)
            if cluster and meta.get("name") == f"{cluster}-kubeconfig":
                return str(cluster)
            return None

        return cls(
            client,
            namespace,
            label_selector=_CAPI_LABEL,
            key="value",
            name_of=name_of,
            policy=policy,
            sync_timeout=sync_timeout,
        )

    async def _setup(self) -> None:
        self._secrets = await self._informer(_SECRET, self.label_selector)

    async def desired(self) -> Mapping[str, DesiredCluster]:
        if self._secrets is None:
            raise RuntimeError("SecretProvider.desired() before run()")
        out: dict[str, DesiredCluster] = {}
        for secret in self._secrets.lister.list():
            if _meta(secret).get("deletionTimestamp"):
                continue
            name = self._name_of(secret)
            if not name:
                continue
            out[name] = self._desired_from(secret)
        return out

    def _desired_from(self, secret: Mapping[str, Any]) -> DesiredCluster:
        meta = _meta(secret)
        digest = f"{meta.get('uid', '')}/{meta.get('resourceVersion', '')}"
        try:
            source, raw = _secret_kubeconfig(secret, self.key)
        except ConfigError as err:
            problem = err

            def fail() -> ClientConfig:
                raise problem

            return DesiredCluster(digest, fail)
        policy = self.policy
        return DesiredCluster(
            fingerprint(raw),
            lambda: load_untrusted_kubeconfig(
                raw, source=f"{source} data.{self.key}", policy=policy
            ),
        )


class ClusterProfileProvider(_InformerProvider):
    """Clusters from the Cluster Inventory API's ``ClusterProfile`` objects in one namespace.

    A profile is engaged, as ``<namespace>/<name>``, once its ``ControlPlaneHealthy``
    condition is ``True`` and exactly one Secret in the namespace carries the labels
    ``x-k8s.io/cluster-inventory-consumer=<consumer>`` and ``x-k8s.io/cluster-profile=<name>``
    with the kubeconfig under ``data.Config`` (the inventory's "secret" strategy). Refused, and
    reported in :attr:`errors` naming the profile: no such Secret, several, a bad kubeconfig;
    the access-provider strategy (credential plugins the profile's status names) is not
    implemented. :meth:`run` raises :class:`~kubectrl.errors.ConfigError` when the
    ``ClusterProfile`` CRD is not served.

    Example::

        provider = ClusterProfileProvider(management_client, "fleet", consumer="my-controller")
    """

    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        *,
        consumer: str,
        policy: KubeconfigPolicy | None = None,
        sync_timeout: float = 60.0,
    ) -> None:
        super().__init__(client, namespace, sync_timeout)
        if not consumer:
            raise ValueError(
                "ClusterProfileProvider: consumer (the Secrets' consumer label) is required"
            )
        self.consumer = consumer
        self.policy = policy if policy is not None else KubeconfigPolicy()
        self._profiles: Informer | None = None
        self._secrets: Informer | None = None

    async def _setup(self) -> None:
        try:
            self._profiles = await self._informer(CLUSTER_PROFILE, None)
        except ResourceNotFoundError:
            raise ConfigError(
                "the ClusterProfile CRD (multicluster.x-k8s.io/v1alpha1) is not served there; "
                "install sigs.k8s.io/cluster-inventory-api's CRD",
                path=f"management cluster {self.client.config.server}",
            ) from None
        self._secrets = await self._informer(_SECRET, f"{_CONSUMER_LABEL}={self.consumer}")

    async def desired(self) -> Mapping[str, DesiredCluster]:
        if self._profiles is None or self._secrets is None:
            raise RuntimeError("ClusterProfileProvider.desired() before run()")
        secrets = self._secrets.lister.list()
        out: dict[str, DesiredCluster] = {}
        for profile in self._profiles.lister.list():
            meta = _meta(profile)
            if meta.get("deletionTimestamp") or not _healthy(profile):
                continue
            name = str(meta.get("name", ""))
            cluster = f"{meta.get('namespace', '')}/{name}"
            matching = [
                s for s in secrets if (_meta(s).get("labels") or {}).get(_PROFILE_LABEL) == name
            ]
            out[cluster] = self._desired_from(profile, cluster, matching)
        return out

    def _desired_from(
        self, profile: Mapping[str, Any], cluster: str, secrets: list[dict[str, Any]]
    ) -> DesiredCluster:
        source = f"clusterprofile {cluster}"
        versions = ",".join(str(_meta(s).get("resourceVersion", "")) for s in secrets)
        digest = f"{_meta(profile).get('uid', '')}/{versions}"
        problem: ConfigError | None = None
        raw = b""
        secret_source = ""
        if not secrets:
            status = profile.get("status") or {}
            plugins = status.get("accessProviders") or status.get("credentialProviders")
            what = (
                "names access providers (credential plugins), which kubectrl does not run; "
                "give it a kubeconfig Secret instead"
                if plugins
                else "has no kubeconfig Secret"
            )
            problem = ConfigError(
                f"{what} (labels {_CONSUMER_LABEL}={self.consumer}, {_PROFILE_LABEL}=<name>)",
                path=source,
            )
        elif len(secrets) > 1:
            names = ", ".join(sorted(str(_meta(s).get("name")) for s in secrets))
            problem = ConfigError(
                f"has {len(secrets)} kubeconfig Secrets ({names}); expected exactly one",
                path=source,
            )
        else:
            try:
                secret_source, raw = _secret_kubeconfig(secrets[0], "Config")
            except ConfigError as err:
                problem = err
        if problem is not None:
            failure = problem

            def fail() -> ClientConfig:
                raise failure

            return DesiredCluster(digest, fail)
        policy = self.policy
        return DesiredCluster(
            fingerprint(raw),
            lambda: load_untrusted_kubeconfig(
                raw, source=f"{source} ({secret_source} data.Config)", policy=policy
            ),
        )


def _healthy(profile: Mapping[str, Any]) -> bool:
    for condition in (profile.get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "ControlPlaneHealthy":
            return condition.get("status") == "True"
    return False
