"""Where objects live: the :class:`~.memory.Storage` interface, as small as etcd v3 makes it,
with :class:`~.memory.MemoryStorage` (:mod:`.memory`) and ``SQLiteStorage`` (:mod:`.sqlite`)."""
