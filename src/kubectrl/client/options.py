"""The options of the client verbs, one typed bundle per verb family.

Example::

    from kubectrl.client.options import ApplyOptions
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.client._options import (
    ApplyOptions,
    DeleteAllOptions,
    DeleteOptions,
    FieldValidation,
    GetOptions,
    ListOptions,
    MergeOptions,
    PageOptions,
    PatchOptions,
    WatchOptions,
    WriteOptions,
)
from kubectrl.client._pod_logs import LogOptions, LogStreamOptions

__all__ = [
    "ApplyOptions",
    "DeleteAllOptions",
    "DeleteOptions",
    "FieldValidation",
    "GetOptions",
    "ListOptions",
    "LogOptions",
    "LogStreamOptions",
    "MergeOptions",
    "PageOptions",
    "PatchOptions",
    "WatchOptions",
    "WriteOptions",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.client")
