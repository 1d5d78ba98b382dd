"""Sharding a controller's objects across replicas.

Example::

    from kubectrl.runtime.sharding import ShardContext
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._sharding import (
    ShardContext,
    ShardedRunner,
    ShardingOptions,
    ShardSetup,
    current_shard,
    owner_in_shard,
)

__all__ = [
    "ShardContext",
    "ShardSetup",
    "ShardedRunner",
    "ShardingOptions",
    "current_shard",
    "owner_in_shard",
]

_publish(__name__, globals(), __all__, private_of="kubectrl.runtime")
