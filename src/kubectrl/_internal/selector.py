"""Label selectors evaluated locally by listers: one rule set, :mod:`kubectrl.labels`'.

Every form :data:`kubectrl.labels.LabelSelectorLike` names is accepted (a selector string, a
``{label: value}`` mapping, a ``metav1.LabelSelector`` dict with ``matchExpressions``, a
:class:`kubectrl.labels.LabelSelector`), so a selector the cache evaluates and the same selector
sent to the server (``kubectrl.labels.selector_string``) agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubectrl.labels import LabelSelectorLike, parse

__all__ = ["parse_label_selector"]


def parse_label_selector(selector: LabelSelectorLike) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate ``obj -> bool`` for ``selector`` (applied to ``metadata.labels``).

    Raises ``ValueError`` naming the fault for a malformed selector.

    Example::

        >>> match = parse_label_selector({"matchLabels": {"app": "web"}, "matchExpressions": [
        ...     {"key": "tier", "operator": "In", "values": ["front", "back"]}]})
        >>> match({"metadata": {"labels": {"app": "web", "tier": "front"}}})
        True
    """
    return parse(selector).matches_object
