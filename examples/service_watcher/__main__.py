"""``python examples/service_watcher`` runs the watcher."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service_watcher import main

sys.exit(main())
