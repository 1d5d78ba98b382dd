"""``python examples/multicluster_configmap --management KUBECONFIG --fleet DIR``."""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from configmap_copier import main

asyncio.run(main())
