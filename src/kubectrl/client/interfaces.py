"""The client interfaces (controller-runtime's ``client.Reader``, ``Writer``, ...) and their
blocking twins; ``KubeClient`` and ``BlockingKubeClient`` are also in :mod:`kubectrl.client`.

Example::

    from kubectrl.client.interfaces import BlockingPager
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.client._interfaces import (
    Body,
    Pager,
    Reader,
    StatusClient,
    StatusWriter,
    SubResourceClient,
    Writer,
)
from kubectrl.client._interfaces_blocking import (
    BlockingPager,
    BlockingReader,
    BlockingStatusClient,
    BlockingStatusWriter,
    BlockingSubResourceClient,
    BlockingWriter,
)
from kubectrl.client._types import WriteGuard, WriteObserver

__all__ = [
    "BlockingPager",
    "BlockingReader",
    "BlockingStatusClient",
    "BlockingStatusWriter",
    "BlockingSubResourceClient",
    "BlockingWriter",
    "Body",
    "Pager",
    "Reader",
    "StatusClient",
    "StatusWriter",
    "SubResourceClient",
    "WriteGuard",
    "WriteObserver",
    "Writer",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.client")
