"""Owner references, finalizers and create-or-update (controller-runtime's
``pkg/controller/controllerutil``).

Example::

    from kubectrl.runtime.controllerutil import AlreadyOwnedError
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._controllerutil import (
    AlreadyOwnedError,
    OperationResult,
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    has_controller_reference,
    remove_finalizer,
    set_controller_reference,
    set_owner_reference,
)

__all__ = [
    "AlreadyOwnedError",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "has_controller_reference",
    "remove_finalizer",
    "set_controller_reference",
    "set_owner_reference",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
