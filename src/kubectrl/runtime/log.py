"""Log lines written inside a reconcile carry the reconcile's fields, as controller-runtime's
``log.FromContext(ctx)`` logger does (``pkg/log``, the values its controller adds before
calling ``Reconcile``), with no code from you.

A controller, when it starts, wraps the :func:`logging.setLogRecordFactory` factory
(:func:`install`): a record made while a reconcile runs, in its task or in the thread of a
``def`` reconciler, from any logger (``logging.getLogger(__name__).info(...)``), gets the
attributes ``controller``, ``namespace``, ``object_name`` and ``reconcile_id`` (``name`` is
the logger's name in :class:`logging.LogRecord`), and for a controller a ``Builder`` made,
``controller_group`` and ``controller_kind`` (its ``for_`` kind: controller-runtime's
``controllerGroup`` and ``controllerKind``). They are there for any formatter (a JSON one,
or ``%(reconcile_id)s`` in a format string) once the record is formatted, and for a filter that
reads them. An ``extra=`` of your own with one of those keys wins.

Example::

    import logging
    from kubectrl.runtime.log import reconcile_fields

    log = logging.getLogger(__name__)

    async def reconcile(request):
        log.info("creating deployment")           # carries controller, namespace, ...
        print(reconcile_fields())                 # the same fields, for another logging library

:func:`uninstall` puts the previous factory back (no more fields); :func:`install` again.
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime import _log_context
from kubectrl.runtime._controller import current_reconcile
from kubectrl.runtime._log_context import FIELDS

__all__ = ["FIELDS", "install", "installed", "reconcile_fields", "uninstall"]


def reconcile_fields() -> dict[str, str]:
    """The running reconcile's log fields (``controller``, ``namespace``, ``object_name``,
    ``reconcile_id``, and ``controller_group``, ``controller_kind`` for a Builder's
    controller); empty outside a reconcile.

    Example::

        >>> reconcile_fields()
        {}
    """
    info = current_reconcile()
    return {} if info is None else _log_context.fields_of(info)


def install() -> None:
    """Make records created inside a reconcile carry its fields (idempotent). Every
    :class:`~kubectrl.runtime.Controller` calls it when it starts.

    Example::

        >>> install(); installed()
        True
    """
    _log_context.install(current_reconcile)


def installed() -> bool:
    """Whether records made inside a reconcile get its fields now.

    Example::

        >>> isinstance(installed(), bool)
        True
    """
    return _log_context.installed()


def uninstall() -> None:
    """Put back the record factory :func:`install` wrapped; records get no fields any more
    (until a controller starts again or :func:`install` is called).

    Example::

        >>> uninstall(); installed()
        False
    """
    _log_context.uninstall()


_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
