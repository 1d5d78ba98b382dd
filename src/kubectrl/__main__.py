"""``python -m kubectrl``: command-line tools.

``python -m kubectrl crd path.to.module:Foo [path.to.module:FooV1 ...] [--out DIR] [--storage V]``
prints the CRD generated from the models (all versions of one kind), or writes it to
``DIR/<plural>.<group>.yaml``. A bad import path or a model a CRD cannot express exits with
status 2 and one line on stderr naming the problem.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]


class _UsageError(Exception):
    """One line for stderr, exit status 2."""


def _load(spec: str) -> Any:
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise _UsageError(f"{spec!r}: expected module.path:ClassName")
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of the user's module is reported as such
        raise _UsageError(
            f"{spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise _UsageError(f"{spec!r}: {module_name!r} has no attribute {attr_path!r}") from None
    return value


def _crd(args: argparse.Namespace) -> int:
    from kubectrl import crd as crd_module

    models = [_load(spec) for spec in args.models]
    try:
        crd = crd_module.generate(*models, storage=args.storage)
    except crd_module.UnsupportedModelError as exc:
        raise _UsageError(str(exc)) from exc
    text = crd_module.to_yaml(crd)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{crd['metadata']['name']}.yaml"
    path.write_text(text, encoding="utf-8")
    sys.stdout.write(f"{path}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    Example::

        >>> main(["crd", "no_such_module:Foo"])
        2
    """
    parser = argparse.ArgumentParser(prog="python -m kubectrl")
    commands = parser.add_subparsers(dest="command", required=True)
    crd = commands.add_parser(
        "crd", help="generate a CustomResourceDefinition from CustomResource models"
    )
    crd.add_argument("models", nargs="+", metavar="module:Class", help="one model per version")
    crd.add_argument("--out", metavar="DIR", help="write DIR/<plural>.<group>.yaml")
    crd.add_argument("--storage", metavar="VERSION", help="the stored version (default: declared)")
    args = parser.parse_args(argv)
    try:
        return _crd(args)
    except _UsageError as exc:
        sys.stderr.write(f"python -m kubectrl crd: error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
