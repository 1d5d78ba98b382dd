"""Import cost: ``import kubectrl`` + load a kubeconfig, or ``import kopf``.

Prints the wall time of the imports (and the load) and the RSS after them, minus an empty
interpreter's (measured by the driver with ``--what none``).
"""

from __future__ import annotations

import time

started = time.perf_counter()

import sys  # noqa: E402

from _measure import emit, rss_kib  # noqa: E402

what = sys.argv[1]
if what == "kubectrl":
    import kubectrl  # noqa: F401
    from kubectrl.client import load_config

    load_config()  # $KUBECONFIG, set by the driver
elif what == "kopf":
    import kopf  # noqa: F401
elif what != "none":
    raise SystemExit(f"unknown {what!r}")
emit(phase="import", what=what, wall_s=time.perf_counter() - started, rss_kib=rss_kib())
