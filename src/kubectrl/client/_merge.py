"""Merge patches computed from two versions of an object (controller-runtime's ``MergeFrom``).

:func:`merge_patch_diff` is the JSON merge patch (RFC 7386) between two dicts;
:func:`send_merge_from` computes it between an object as read and as changed and sends it
through any client's ``patch`` (so a fenced client fences it). Every client's
``patch_merge_from`` and its status writer's are this one function.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kubectrl import kinds as _kinds
from kubectrl._internal.merge import merge_patch_diff
from kubectrl.client._models import to_dict
from kubectrl.client._refresh import refresh_in_place
from kubectrl.objects import gvk_of, metadata_of

__all__ = ["merge_patch_diff", "send_merge_from"]


#: ``_patch_at(resource, name, patch, options, *, subresource=...)`` of some client.
PatchAt = Callable[..., Awaitable[dict[str, Any]]]


async def send_merge_from(
    patch_at: PatchAt,
    original: Any,
    modified: Any,
    options: Mapping[str, Any],
    *,
    subresource: str = "",
) -> Any:
    """Send through ``patch_at`` the merge patch from ``original`` to ``modified``; the result
    is typed like ``modified`` (a model instance for a model, else a dict), and ``modified`` is
    refreshed in place with it (:func:`~kubectrl.client._refresh.refresh_in_place`).

    With ``options["optimistic_lock"]`` the patch carries ``original``'s
    ``metadata.resourceVersion`` (``ValueError`` when it has none), so a concurrent change makes
    the server refuse it. The other options (a :class:`~kubectrl.client.MergeOptions`: the
    write's) go to ``patch_at`` as they are, with the object's namespace.
    """
    model = type(modified) if _kinds.is_model_class(type(modified)) else None
    original_dict, modified_dict = to_dict(original), to_dict(modified)
    diff = merge_patch_diff(original_dict, modified_dict)
    write = dict(options)
    if write.pop("optimistic_lock", False):
        version = metadata_of(original_dict).get("resourceVersion")
        if not version:
            raise ValueError("optimistic_lock needs original.metadata.resourceVersion")
        diff.setdefault("metadata", {})["resourceVersion"] = str(version)
    gvk = gvk_of(modified_dict)
    meta = metadata_of(modified_dict)
    write["namespace"] = str(meta.get("namespace") or "") or None
    result = await patch_at(
        (gvk.api_version, gvk.kind),
        str(meta.get("name") or ""),
        diff,
        write,
        subresource=subresource,
    )
    # ``modified`` is the object patched (controller-runtime's ``Patch(ctx, obj,
    # MergeFrom(original))`` decodes the answer into ``obj``): refreshed in place.
    refresh_in_place(modified, result)
    return _kinds.from_dict(model, result) if model is not None else result
