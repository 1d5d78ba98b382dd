"""The package's version, in one place: the build backend reads it from here.

>>> import kubectrl
>>> kubectrl.__version__ == __version__
True
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"
