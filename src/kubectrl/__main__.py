"""``python -m kubectrl``: command-line tools.

``python -m kubectrl crd path.to.module:Foo [path.to.module:FooV1 ...] [--out DIR] [--storage V]``
prints the CRD generated from the models (all versions of one kind), or writes it to
``DIR/<plural>.<group>.yaml``.

``python -m kubectrl rbac path.to.module:Reconciler [...] --name NAME [--out FILE]`` prints the
ClusterRole (and namespaced Roles) granting the rules the sources declare with
:func:`kubectrl.rbac.rule` (a source may also be a :class:`~kubectrl.rbac.PolicyRule` or a list
of them, e.g. ``kubectrl.rbac:EVENT_RULES``).

``python -m kubectrl models --from-crd FILE... | --from-cluster NAME... [--version V] [--out DIR]
[--force]``
writes typed models of CRDs you did not write (:mod:`kubectrl.models`): one module per CRD,
``DIR/<plural>_<group>.py``, or the module on stdout for one CRD without ``--out``; a file
there that the generator did not write is never overwritten (``--force`` does).
``--from-cluster`` reads the CRDs by name through the kubeconfig (``KUBECONFIG``, else
``~/.kube/config``, else in-cluster).

``python -m kubectrl init NAME [--domain example.com] [--kubectrl-source PATH|URL]`` scaffolds a
controller project in the current directory (depending on kubectrl from the package index, or
from the checkout or URL given); ``python -m kubectrl create api --group G --version V --kind K
[--webhooks]``, run inside it, adds a kind: its model, reconciler, tests (and webhooks).

A bad import path, a model a CRD cannot express or a scaffold that would overwrite a file exits
with status 2 and one line on stderr naming the problem.
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


def _models(args: argparse.Namespace) -> int:
    from kubectrl import models

    definitions: list[tuple[str, dict[str, Any]]] = []
    try:
        for path in args.from_crd or ():
            definitions.extend((f"{path}: ", d) for d in models.load_crds(path))
    except models.ModelGenerationError as exc:
        raise _UsageError(str(exc)) from exc
    if args.from_cluster:
        definitions.extend(("", d) for d in _cluster_crds(args.from_cluster))
    if len(definitions) > 1 and args.out is None:
        raise _UsageError(f"{len(definitions)} CRDs: give --out DIR to write a module for each")
    texts: list[tuple[str, str]] = []
    for source, definition in definitions:
        try:
            name = models.module_name(definition)
            texts.append((name, models.from_crd(definition, version=args.version)))
        except models.ModelGenerationError as exc:
            # The message names the CRD and the field; the file too, when it came from one.
            raise _UsageError(f"{source}{exc}") from exc
    if args.out is None:
        sys.stdout.write(texts[0][1])
        return 0
    out = Path(args.out)
    modules: dict[str, str] = {}
    for name, text in texts:
        if name in modules:
            raise _UsageError(
                f"two CRDs would both be written to {out / name}.py; generate them apart"
            )
        modules[name] = text
    try:
        written = models.write_modules(modules, out, force=args.force)
    except models.ModelGenerationError as exc:
        raise _UsageError(str(exc)) from exc
    sys.stdout.writelines(f"{path}\n" for path in written)
    return 0


def operators_of(paths: Sequence[str]) -> list[Any]:
    """The :class:`~kubectrl.operator.Operator` objects at the top level of the Python files
    ``paths`` (each run as a module, as ``kopf run`` loads them), in order; a file that cannot be
    run is a usage error naming it.

    Example::

        >>> operators_of(["/no/such/file.py"])
        Traceback (most recent call last):
        ...
        kubectrl.__main__._UsageError: /no/such/file.py: cannot run it: FileNotFoundError: ...
    """
    import runpy

    from kubectrl.operator import Operator

    found: list[Any] = []
    for path in paths:
        try:
            namespace = runpy.run_path(path, run_name=f"kubectrl_operator_{len(found)}")
        except (OSError, SyntaxError, ImportError) as exc:
            raise _UsageError(f"{path}: cannot run it: {type(exc).__name__}: {exc}") from exc
        here = [value for value in namespace.values() if isinstance(value, Operator)]
        if not here:
            raise _UsageError(f"{path}: defines no Operator (operator = Operator() at the top)")
        found.extend(here)
    return found


def _operator_run(args: argparse.Namespace) -> int:
    import logging

    from kubectrl.runtime import Manager, ManagerOptions

    level = logging.DEBUG if args.debug else logging.INFO if args.verbose else logging.WARNING
    logging.basicConfig(level=level)
    operators = operators_of(args.files)
    options = ManagerOptions(
        cache_namespace=args.namespace,
        leader_election=bool(args.leader_election_id),
        leader_election_id=args.leader_election_id or "",
        health_probe_bind_address=args.health_probe_bind_address,
    )
    manager = Manager(options=options)
    for operator in operators:
        if operator.attached:
            raise _UsageError(
                f"operator {operator.name!r} is attached to a manager of its own; "
                "`operator run` gives every operator the manager it makes (use operator.run())"
            )
        operator.attach(manager)
    manager.run()
    return 0


def _cluster_crds(names: Sequence[str]) -> list[dict[str, Any]]:
    from kubectrl import errors
    from kubectrl.client import BlockingClient, load_config

    crd_kind = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    found: list[dict[str, Any]] = []
    try:
        with BlockingClient(load_config()) as client:
            for name in names:
                try:
                    found.append(client.get(crd_kind, name))
                except errors.NotFoundError:
                    raise _UsageError(
                        f"no CustomResourceDefinition {name!r} in the cluster"
                    ) from None
    except errors.KubectrlError as exc:
        raise _UsageError(f"cannot read CRDs from the cluster: {exc}") from exc
    return found


def _rbac(args: argparse.Namespace) -> int:
    from kubectrl import rbac

    sources = [_load(spec) for spec in args.sources]
    try:
        text = rbac.to_yaml(rbac.roles(args.name, *sources))
    except (TypeError, ValueError) as exc:
        raise _UsageError(str(exc)) from exc
    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    sys.stdout.write(f"{out}\n")
    return 0


def _init(args: argparse.Namespace) -> int:
    from kubectrl import _scaffold

    try:
        written = _scaffold.init(
            Path.cwd(), args.name, domain=args.domain, kubectrl_source=args.kubectrl_source
        )
    except _scaffold.ScaffoldError as exc:
        raise _UsageError(str(exc)) from exc
    for path in written:
        sys.stdout.write(f"{path}\n")
    return 0


def _create_api(args: argparse.Namespace) -> int:
    from kubectrl import _scaffold

    try:
        written = _scaffold.create_api(
            Path.cwd(),
            group=args.group,
            version=args.version,
            kind=args.kind,
            plural=args.plural,
            namespaced=not args.cluster_scoped,
            webhooks=args.webhooks,
        )
    except _scaffold.ScaffoldError as exc:
        raise _UsageError(str(exc)) from exc
    for path in written:
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
    crd.set_defaults(run=_crd, label="crd")

    models = commands.add_parser(
        "models", help="generate typed models (a Python module per CRD) from existing CRDs"
    )
    source = models.add_mutually_exclusive_group(required=True)
    source.add_argument("--from-crd", nargs="+", metavar="FILE", help="CRD YAML files")
    source.add_argument(
        "--from-cluster", nargs="+", metavar="NAME", help="CRD names, read via the kubeconfig"
    )
    models.add_argument("--version", metavar="V", help="only this version (default: all)")
    models.add_argument("--out", metavar="DIR", help="write DIR/<plural>_<group>.py per CRD")
    models.add_argument(
        "--force",
        action="store_true",
        help="with --out, overwrite files the generator did not write (default: refuse)",
    )
    models.set_defaults(run=_models, label="models")

    rbac = commands.add_parser(
        "rbac", help="generate the ClusterRole (and Roles) from kubectrl.rbac.rule declarations"
    )
    rbac.add_argument(
        "sources", nargs="+", metavar="module:Object", help="a decorated class, or PolicyRules"
    )
    rbac.add_argument("--name", required=True, help="the name of the ClusterRole and Roles")
    rbac.add_argument("--out", metavar="FILE", help="write FILE instead of printing")
    rbac.set_defaults(run=_rbac, label="rbac")

    init = commands.add_parser("init", help="scaffold a controller project in this directory")
    init.add_argument("name", help="project name (its Python package: dashes become underscores)")
    init.add_argument("--domain", default="example.com", help="API group suffix (%(default)s)")
    init.add_argument(
        "--kubectrl-source",
        default="",
        metavar="PATH|URL",
        help="depend on kubectrl from a checkout (path) or a URL (git+https://...@ref) "
        "instead of the package index",
    )
    init.set_defaults(run=_init, label="init")

    create = commands.add_parser("create", help="add to the project in this directory")
    create_commands = create.add_subparsers(dest="what", required=True)
    api = create_commands.add_parser("api", help="a new kind: model, reconciler and tests")
    api.add_argument("--group", required=True, help="group, without the domain (e.g. ship)")
    api.add_argument("--version", required=True, help="version (e.g. v1, v1beta1)")
    api.add_argument("--kind", required=True, help="kind, UpperCamelCase (e.g. Frigate)")
    api.add_argument("--plural", default="", help="plural resource (default: derived)")
    api.add_argument("--cluster-scoped", action="store_true", help="a cluster-scoped kind")
    api.add_argument("--webhooks", action="store_true", help="add defaulting and validation")
    api.set_defaults(run=_create_api, label="create api")

    operator = commands.add_parser("operator", help="run operators (kopf's `kopf run`)")
    operator_commands = operator.add_subparsers(dest="what", required=True)
    run = operator_commands.add_parser(
        "run", help="run the Operator objects of Python files on one manager until SIGTERM"
    )
    run.add_argument("files", nargs="+", metavar="FILE", help="a Python file defining operators")
    run.add_argument("--namespace", "-n", help="watch one namespace only (kopf's --namespace)")
    run.add_argument(
        "--leader-election-id",
        metavar="NAME",
        help="run as one of several replicas: only the holder of Lease NAME handles (--peering)",
    )
    run.add_argument(
        "--health-probe-bind-address",
        default="0",
        metavar="ADDR",
        help="serve /healthz and /readyz (with the probes) on ADDR, e.g. :8080 (--liveness)",
    )
    run.add_argument("--verbose", "-v", action="store_true", help="log at INFO (kopf's --verbose)")
    run.add_argument("--debug", action="store_true", help="log at DEBUG (kopf's --debug)")
    run.set_defaults(run=_operator_run, label="operator run")

    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except _UsageError as exc:
        sys.stderr.write(f"python -m kubectrl {args.label}: error: {exc}\n")
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
