"""CRD conversion, hub and spoke (controller-runtime's ``pkg/webhook/conversion``).

One version of a kind is the *hub* (usually the storage version); every other version is a
*spoke* whose model converts itself to and from the hub::

    class FooV1beta1(CustomResource, group="samplecontroller.k8s.io", version="v1beta1", ...):
        def to_hub(self) -> Foo: ...
        @classmethod
        def from_hub(cls, hub: Foo) -> FooV1beta1: ...

A spoke-to-spoke conversion goes through the hub. The :class:`ConversionHandler` answers
``ConversionReview`` v1 requests for any number of kinds, converting every object of the list;
each converted object keeps the original's ``metadata`` (the API server refuses a conversion that
changes anything there but labels and annotations, which are taken from the converted object)
and gets the desired ``apiVersion``.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from kubectrl import kinds as _kinds
from kubectrl import objects as _objects
from kubectrl.errors import KubectrlError

__all__ = ["ConversionError", "ConversionHandler", "Convertible"]

log = logging.getLogger("kubectrl.webhook")

H = TypeVar("H")
S = TypeVar("S", bound="Convertible[Any]")


class Convertible(Protocol[H]):
    """A spoke version's model: converts to and from the hub model ``H``.

    Raise (any exception) to fail the conversion; the message is sent to the API server naming
    the object and the versions.

    Example::

        class FooV1beta1(CustomResource, group="example.com", version="v1beta1", kind="Foo"):
            spec: FooSpecV1beta1

            def to_hub(self) -> Foo:
                return Foo(metadata=self.metadata, spec=...)

            @classmethod
            def from_hub(cls, hub: Foo) -> FooV1beta1:
                return cls(metadata=hub.metadata, spec=...)
    """

    def to_hub(self) -> H:
        """This object as the hub version."""
        ...

    @classmethod
    def from_hub(cls: type[S], hub: H) -> S:
        """The hub object as this version."""
        ...


class ConversionError(KubectrlError):
    """A conversion failed; the message names the object and the versions.

    Not retryable: the same object converts the same way until the models change.
    """


@dataclasses.dataclass
class _Kind:
    group: str
    kind: str
    hub_version: str
    models: dict[str, type[Any]]


class ConversionHandler:
    """Converts custom resources between versions for the API server (``/convert``).

    :meth:`add` registers a kind's hub model and its spoke models (they must share group and
    kind and have different versions; each spoke has ``to_hub`` and ``from_hub``).
    :meth:`review` answers one ``ConversionReview`` dict.

    Example::

        >>> from kubectrl.resources import CustomResource
        >>> class Hub(CustomResource, group="example.com", version="v1", kind="Thing"):
        ...     size: int = 0
        >>> class Old(CustomResource, group="example.com", version="v1alpha1", kind="Thing"):
        ...     length: int = 0
        ...     def to_hub(self) -> Hub:
        ...         return Hub(metadata=self.metadata, size=self.length)
        ...     @classmethod
        ...     def from_hub(cls, hub: Hub) -> "Old":
        ...         return cls(metadata=hub.metadata, length=hub.size)
        >>> handler = ConversionHandler()
        >>> handler.add(Hub, Old)
        >>> answer = handler.review({"apiVersion": "apiextensions.k8s.io/v1",
        ...     "kind": "ConversionReview", "request": {"uid": "1",
        ...     "desiredAPIVersion": "example.com/v1", "objects": [{"apiVersion":
        ...     "example.com/v1alpha1", "kind": "Thing", "metadata": {"name": "a"}, "length": 3}]}})
        >>> answer["response"]["result"], answer["response"]["convertedObjects"][0]["size"]
        ({'status': 'Success'}, 3)
    """

    def __init__(self) -> None:
        self._kinds: dict[tuple[str, str], _Kind] = {}

    @property
    def kinds(self) -> list[tuple[str, str, str, list[str]]]:
        """``(group, kind, hub version, every version)`` for each registered kind."""
        return [(k.group, k.kind, k.hub_version, list(k.models)) for k in self._kinds.values()]

    @property
    def hubs(self) -> list[_kinds.KindInfo]:
        """The hub's :class:`~kubectrl.kinds.KindInfo` of each registered kind, in order.

        What :attr:`WebhookServer.registrations <kubectrl.webhook.WebhookServer.registrations>`
        lists for a conversion path: the manifests give each of these kinds' CRD
        ``strategy: Webhook``.
        """
        return [_kinds.kind_info(k.models[k.hub_version]) for k in self._kinds.values()]

    def add(self, hub: type[Any], *spokes: type[Any]) -> None:
        """Register ``hub`` (a CustomResource model) and the spoke models converting to it."""
        hub_info = _kinds.kind_info(hub)
        key = (hub_info.group, hub_info.kind)
        entry = self._kinds.get(key)
        if entry is not None and entry.hub_version != hub_info.version:
            raise ValueError(
                f"{hub_info.group}/{hub_info.kind} already has hub version {entry.hub_version}, "
                f"not {hub_info.version}: one hub per kind"
            )
        if entry is None:
            entry = _Kind(hub_info.group, hub_info.kind, hub_info.version, {hub_info.version: hub})
        for spoke in spokes:
            info = _kinds.kind_info(spoke)
            name = getattr(spoke, "__qualname__", repr(spoke))
            if (info.group, info.kind) != key:
                raise ValueError(
                    f"spoke {name} is {info.group}/{info.kind}, not {key[0]}/{key[1]} like the hub"
                )
            if info.version == hub_info.version:
                raise ValueError(f"spoke {name} has the hub's version {info.version}")
            for method in ("to_hub", "from_hub"):
                if not callable(getattr(spoke, method, None)):
                    raise TypeError(f"spoke {name} ({info.version}) has no {method}() method")
            entry.models[info.version] = spoke
        self._kinds[key] = entry

    def review(self, review: Mapping[str, Any]) -> dict[str, Any]:
        """The ``ConversionReview`` answering ``review`` (``ValueError`` when it is malformed).

        A failed conversion answers ``result: {status: Failure, message}`` and converts
        nothing (controller-runtime's ``errored``); the failure is logged.
        """
        request = review.get("request") if isinstance(review, Mapping) else None
        if not isinstance(request, Mapping):
            raise ValueError("the ConversionReview has no request")
        uid = request.get("uid")
        desired = request.get("desiredAPIVersion")
        objects = request.get("objects") or []
        if (
            not isinstance(uid, str)
            or not isinstance(desired, str)
            or not isinstance(objects, list)
        ):
            raise ValueError("request needs uid, desiredAPIVersion and a list of objects")
        response: dict[str, Any] = {"uid": uid}
        try:
            response["convertedObjects"] = [self.convert(obj, desired) for obj in objects]
            response["result"] = {"status": "Success"}
        except ConversionError as err:
            log.error(
                "conversion failed: %s (uid %s)", err, uid, extra={"uid": uid, "error": str(err)}
            )
            response["convertedObjects"] = []
            response["result"] = {"status": "Failure", "message": str(err)}
        return {
            "apiVersion": review.get("apiVersion") or "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "response": response,
        }

    def convert(self, obj: Mapping[str, Any], desired_api_version: str) -> dict[str, Any]:
        """``obj`` (a dict) at ``desired_api_version``; :class:`ConversionError` naming it."""
        if not isinstance(obj, Mapping):
            raise ConversionError(f"an object to convert is a {type(obj).__name__}, not a map")
        kind = str(obj.get("kind", ""))
        source = str(obj.get("apiVersion", ""))
        meta = _objects.metadata_of(obj)
        name = str(meta.get("name") or meta.get("generateName") or "<unnamed>")
        namespace = str(meta.get("namespace") or "")
        what = f"{kind} {namespace + '/' if namespace else ''}{name}"
        prefix = f"converting {what} from {source} to {desired_api_version}"
        group, src_version = _objects.split_api_version(source)
        dst_group, dst_version = _objects.split_api_version(desired_api_version)
        if group != dst_group:
            raise ConversionError(f"{prefix}: the group differs")
        entry = self._kinds.get((group, kind))
        if entry is None:
            raise ConversionError(f"{prefix}: no conversion is registered for {group}/{kind}")
        if src_version == dst_version:
            return dict(obj)
        for version in (src_version, dst_version):
            if version not in entry.models:
                raise ConversionError(
                    f"{prefix}: unknown version {version} (known: {', '.join(entry.models)})"
                )
        src_model = entry.models[src_version]
        dst_model = entry.models[dst_version]
        try:
            current: Any = _kinds.from_dict(src_model, obj)
            if src_version != entry.hub_version:
                current = current.to_hub()
            if dst_version != entry.hub_version:
                current = dst_model.from_hub(current)
            converted = _kinds.to_dict(current)
        except Exception as err:
            raise ConversionError(f"{prefix}: {type(err).__name__}: {err}") from err
        if type(current) is not dst_model:
            raise ConversionError(
                f"{prefix}: got a {type(current).__qualname__}, expected "
                f"{getattr(dst_model, '__qualname__', dst_model)}"
            )
        converted = dict(converted)
        converted["apiVersion"] = desired_api_version
        converted["kind"] = kind
        metadata = copy.deepcopy(dict(meta))
        new_meta = converted.get("metadata")
        if isinstance(new_meta, Mapping):
            for key in ("labels", "annotations"):
                if key in new_meta:
                    metadata[key] = copy.deepcopy(new_meta[key])
        converted["metadata"] = metadata
        return converted

    def __repr__(self) -> str:
        names = ", ".join(f"{g}/{k}" for g, k in self._kinds)
        return f"ConversionHandler({names})"
