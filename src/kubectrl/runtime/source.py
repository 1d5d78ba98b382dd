"""Sources of events for a controller (controller-runtime's ``pkg/source``).

Example::

    from kubectrl.runtime.source import ChannelSource
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._controller import SourceSyncError
from kubectrl.runtime._kind_source import KindSource
from kubectrl.runtime._source import ChannelSource, Source

__all__ = ["ChannelSource", "KindSource", "Source", "SourceSyncError"]

_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
