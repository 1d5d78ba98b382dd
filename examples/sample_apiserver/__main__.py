"""``python examples/sample_apiserver`` runs the wardle API server (``--help`` for flags)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from main import main

sys.exit(main())
