"""Writes to a SQLiteStorage until it is killed, acknowledging each write on stdout.

Run by tests/unit/apiserver/test_sqlite_kill.py as ``python sqlite_writer.py PATH START``: it
updates 20 ConfigMaps in turn (creating each the first time) and, after each write returned,
prints ``REVISION NAME I`` and flushes. A line printed is a write the storage acknowledged.
"""

from __future__ import annotations

import sys

from kubectrl.apiserver._storage.sqlite import SQLiteStorage

CM = ("", "configmaps")


def main() -> None:
    path, start = sys.argv[1], int(sys.argv[2])
    storage = SQLiteStorage(path)
    for i in range(start, start + 100_000):  # bounded: the test kills it long before
        key = ("d", f"cm-{i % 20}")
        current = storage.get(CM, key)
        obj = {"metadata": {"name": key[1], "namespace": "d"}, "data": {"i": str(i)}}
        if current is None:
            change = storage.create(CM, key, obj)
        else:
            change = storage.update(CM, key, obj, current["metadata"]["resourceVersion"])
        print(change.revision, key[1], i, flush=True)


if __name__ == "__main__":
    main()
