"""Predicates: which events reach a controller (controller-runtime's ``pkg/predicate``).

Example::

    from kubectrl.runtime.predicate import Predicate
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._predicate import (
    Predicate,
    PredicateFuncs,
    and_,
    annotations_changed,
    generation_changed,
    label_selector,
    labels_changed,
    new_predicate_funcs,
    not_,
    or_,
    resource_version_changed,
)

__all__ = [
    "Predicate",
    "PredicateFuncs",
    "and_",
    "annotations_changed",
    "generation_changed",
    "label_selector",
    "labels_changed",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
