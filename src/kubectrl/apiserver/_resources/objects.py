"""Object plumbing shared by the core's parts: rendering, key order, paths, timestamps."""

from __future__ import annotations

import copy
import importlib
import json
import re
from collections.abc import Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._status import StatusError, bad_request, invalid

__all__ = [
    "OBJECT_META_FIELDS",
    "assign",
    "check",
    "comparable",
    "key_of",
    "lookup",
    "now_string",
    "ordered",
]

_METADATA_ORDER = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
#: The fields of ``ObjectMeta`` (what a schema's ``metadata`` holds beside what it declares).
OBJECT_META_FIELDS = frozenset((*_METADATA_ORDER, "selfLink"))


def now_string(clock: Clock) -> str:
    """The clock's wall time as the apiserver writes timestamps (RFC 3339, seconds, UTC)."""
    return clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(namespace or "", name)``: where an object is stored within its resource."""
    meta = obj["metadata"]
    return (meta.get("namespace", ""), meta["name"])


def ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """Keys in the order the apiserver's JSON has them (kind, apiVersion, metadata first)."""
    head: dict[str, Any] = {k: obj[k] for k in ("kind", "apiVersion", "metadata") if k in obj}
    meta = head.get("metadata")
    if isinstance(meta, dict):
        known = {k: meta[k] for k in _METADATA_ORDER if k in meta}
        head["metadata"] = {**known, **{k: v for k, v in meta.items() if k not in known}}
    return {**head, **{k: v for k, v in obj.items() if k not in head}}


def check(info: ResourceInfo, name: str, causes: list[tuple[str, str, str]]) -> None:
    """Raise 422 Invalid naming the object when there are ``causes``."""
    if causes:
        raise invalid(info.kind, info.group, name, causes)


def lookup(obj: Any, path: str) -> Any:
    """The value at a dotted ``path`` (``None`` when any step is missing)."""
    node = obj
    for part in path.split("."):
        if not part:
            continue
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


def assign(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set the value at a dotted ``path``, creating the objects on the way."""
    parts = [p for p in path.split(".") if p]
    node = obj
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def comparable(obj: Mapping[str, Any]) -> Any:
    """An object without what changes on every write (an unchanged update stores nothing)."""
    out = copy.deepcopy(dict(obj))
    meta = out.get("metadata") or {}
    meta.pop("resourceVersion", None)
    for entry in meta.get("managedFields") or ():
        entry.pop("time", None)
    return out


# ---------------------------------------------------------------------------- request bodies

#: The largest request body the apiserver reads (its ``MaxRequestBodyBytes``, 3 MiB): a larger
#: one is a 413 before any decoding.
MAX_REQUEST_BYTES = 3 * 1024 * 1024
#: The largest object stored (etcd's default ``--max-request-bytes``, 1.5 MiB): the apiserver
#: answers etcd's 500 ``etcdserver: request is too large`` for a larger write.
MAX_OBJECT_BYTES = 3 * 512 * 1024
#: The deepest nesting of objects and lists a body or a patch result may have (the apiserver
#: allows 10000, its JSON decoder's limit; the core's recursive steps need a bound far below
#: Python's recursion limit).
MAX_DEPTH = 100


class NotPlainError(ValueError):
    """A decoded value that is not plain finite JSON: ``problem`` is ``depth`` (``detail`` the
    bracket that went too deep), ``float`` (a NaN or infinite number), ``key`` (a mapping key
    that is not a string) or ``type`` (a value of another type)."""

    def __init__(self, problem: str, detail: Any) -> None:
        super().__init__(f"{problem}: {detail!r}")
        self.problem = problem
        self.detail = detail


def check_plain(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`NotPlainError` unless ``value`` is plain finite JSON (dicts with string
    keys, lists, strings, ints, finite floats, booleans, ``None``) nested at most ``max_depth``
    deep; iterative, so any depth is checked without recursion.

    Example::

        >>> check_plain({"a": [1, 2.5, None, True, "x"]})
        >>> check_plain([[[]]], max_depth=2)
        Traceback (most recent call last):
        ...
        kubectrl.apiserver._resources.objects.NotPlainError: depth: '['
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if depth > max_depth:
                raise NotPlainError("depth", "{")
            for key, item in node.items():
                if not isinstance(key, str):
                    raise NotPlainError("key", key)
                if isinstance(item, (dict, list)):
                    stack.append((item, depth + 1))
                else:
                    _check_scalar(item)
        elif isinstance(node, list):
            if depth > max_depth:
                raise NotPlainError("depth", "[")
            for item in node:
                if isinstance(item, (dict, list)):
                    stack.append((item, depth + 1))
                else:
                    _check_scalar(item)
        else:
            _check_scalar(node)


def _check_scalar(value: Any) -> None:
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise NotPlainError("float", value)
        return
    raise NotPlainError("type", type(value).__name__)


def encoded_size(obj: Any) -> int:
    """The size in bytes of ``obj`` as compact JSON (how large it is in storage)."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def _yaml_error(detail: str) -> str:
    """The message of an apply body that is not YAML, ``detail`` being sigs.k8s.io/yaml's.

    Up to 1.36 the apply patcher unmarshals the body with ``yaml.Unmarshal``, which wraps the
    error ("error decoding YAML: error converting YAML to JSON: ..."); from 1.37 the handler
    transcodes it first with ``yaml.ToJSON``, which does not ("error encoding patch: ...":
    ``validateAndTranscodePatch``, staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
    patch.go, v1.36.3 -> v1.37.2).
    """
    if versions.at_least("1.37"):
        return f"error encoding patch: {detail}"
    return f"error decoding YAML: error converting YAML to JSON: {detail}"


_ALIASING = "yaml: document contains excessive aliasing"
_LOADER: Any = None


def _loader_class() -> Any:
    """A safe YAML loader reading as the apiserver's (``sigs.k8s.io/yaml``) does: timestamps
    stay strings, ``!!binary`` is its decoded text, ``!!set`` a mapping to nulls."""
    global _LOADER
    if _LOADER is None:
        yaml: Any = importlib.import_module("yaml")

        class Loader(yaml.SafeLoader):  # type: ignore[misc]
            pass

        timestamp = "tag:yaml.org,2002:timestamp"
        Loader.yaml_implicit_resolvers = {
            first: [(tag, regexp) for tag, regexp in resolvers if tag != timestamp]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        Loader.add_constructor(timestamp, yaml.SafeLoader.construct_scalar)
        Loader.add_constructor(
            "tag:yaml.org,2002:binary",
            lambda loader, node: yaml.SafeLoader.construct_yaml_binary(loader, node).decode(
                "utf-8", "replace"
            ),
        )
        Loader.add_constructor("tag:yaml.org,2002:set", yaml.SafeLoader.construct_yaml_map)
        _LOADER = Loader
    return _LOADER


def _alias_ratio(decoded: int) -> float:
    # go-yaml v2 decode.go allowedAliasRatio: 99% up to 400k decoded nodes, 10% from 4M.
    if decoded <= 400_000:
        return 0.99
    if decoded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (decoded - 400_000) / 3_600_000


def _children(node: Any) -> list[Any]:
    yaml: Any = importlib.import_module("yaml")
    if isinstance(node, yaml.ScalarNode):
        return []
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value)


def _check_expansion(root: Any) -> None:
    """Refuse a composed YAML document whose aliases expand too far (go-yaml's "excessive
    aliasing", or past the request size) or that nests deeper than :data:`MAX_DEPTH`, before
    anything is built from it: two passes over the node graph, each node once."""
    # Pass 1, document order: the first edge to each node is its anchor, later ones aliases.
    first: set[tuple[int, int]] = set()
    met = {id(root)}
    walk = [root]
    while walk:
        node = walk.pop()
        children = _children(node)
        for index, child in enumerate(children):
            if id(child) not in met:
                met.add(id(child))
                first.add((id(node), index))
        walk.extend(c for i, c in reversed(list(enumerate(children))) if (id(node), i) in first)
    # Pass 2, post-order: per node (decoded nodes, aliases, JSON bytes, depth) once expanded.
    done: dict[int, tuple[int, int, int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if not ready and id(node) in done:
            continue
        children = _children(node)
        if not children and not ready:
            size = len(node.value) + 2 if isinstance(node.value, str) else 2
            done[id(node)] = (1, 0, size, 0 if isinstance(node.value, str) else 1)
            continue
        if not ready:
            active.add(id(node))
            stack.append((node, True))
            for child in children:
                if id(child) in active:
                    raise bad_request(_yaml_error("yaml: anchor contains itself"))
                if id(child) not in done:
                    stack.append((child, False))
            continue
        active.discard(id(node))
        decoded, aliases, size, depth = 1, 0, 2, 0
        for index, child in enumerate(children):
            c_decoded, c_aliases, c_size, c_depth = done[id(child)]
            decoded += c_decoded
            aliases += c_aliases + (0 if (id(node), index) in first else 1)
            size += c_size + 1
            depth = max(depth, c_depth)
        done[id(node)] = (decoded, aliases, size, depth + 1)
    decoded, aliases, size, depth = done[id(root)]
    if depth > MAX_DEPTH:
        raise bad_request(_yaml_error(f"yaml: exceeded max depth of {MAX_DEPTH}"))
    excessive = aliases > 100 and decoded > 1000 and aliases / decoded > _alias_ratio(decoded)
    if excessive or (aliases and size > MAX_REQUEST_BYTES):
        raise bad_request(_yaml_error(_ALIASING))


def _summary(raw: bytes) -> str:
    # apiserver handlers/rest.go summarizeData(body, 30): an object's first 30 bytes, else hex
    if raw[:1] == b"{":
        return raw[:30].decode(errors="replace") + (" ..." if len(raw) > 30 else "")
    return raw[:30].hex() + (" ..." if len(raw) > 30 else "")


def _unrecognized(kind: str, raw: bytes, problem: str) -> StatusError:
    return bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: {problem} ({_summary(raw)})"
    )


class _RefusedNumberError(ValueError):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _constant(literal: str) -> Any:
    raise _RefusedNumberError(literal)


def _finite(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _RefusedNumberError(literal)
    return value


def decode_json(raw: bytes, kind: str, version: str) -> Any:
    """A JSON body decoded as the apiserver decodes one of ``kind`` at ``version``, checked to be
    plain finite JSON at most :data:`MAX_DEPTH` deep: ``NaN``, ``Infinity``, a number beyond
    float64 (``1e999``) and deeper nesting are 400s with the apiserver's texts."""
    try:
        value = json.loads(raw, parse_constant=_constant, parse_float=_finite)
    except _RefusedNumberError as err:
        literal = err.literal
        if literal in ("NaN", "Infinity"):
            raise _unrecognized(
                kind, raw, f"invalid character '{literal[0]}' looking for beginning of value"
            ) from None
        if literal == "-Infinity":
            raise _unrecognized(kind, raw, "invalid character 'I' in numeric literal") from None
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot '
            f"unmarshal number {literal} into Go value of type float64"
        ) from None
    except RecursionError:
        raise _unrecognized(kind, raw, "invalid character '[' exceeded max depth") from None
    except ValueError as err:
        raise bad_request(f"the body of the request could not be decoded: {err}") from None
    try:
        check_plain(value)
    except NotPlainError as err:
        raise _unrecognized(
            kind, raw, f"invalid character '{err.detail}' exceeded max depth"
        ) from None
    return value


def decode_yaml(raw: bytes) -> Any:
    """An apply body (YAML or JSON) decoded as ``sigs.k8s.io/yaml`` does, into plain JSON values:
    aliases bounded before anything is built (:func:`_check_expansion`), timestamps as strings,
    NaN and infinities refused; every failure a 400 (:func:`_yaml_error`)."""
    yaml: Any = importlib.import_module("yaml")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise bad_request(_yaml_error("yaml: invalid leading UTF-8 octet")) from None
    loader = _loader_class()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        value = loader.construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise bad_request(_yaml_error(f"yaml: {where}{err.problem or err.context}")) from None
    except yaml.YAMLError as err:
        raise bad_request(_yaml_error(f"yaml: {err}")) from None
    except RecursionError:
        raise bad_request(_yaml_error(f"yaml: exceeded max depth of {MAX_DEPTH}")) from None
    except (ValueError, TypeError) as err:
        raise bad_request(_yaml_error(f"yaml: {err}")) from None
    finally:
        loader.dispose()
    return _plain(value)


def _plain(value: Any) -> Any:
    """A YAML value as JSON: keys as ``sigs.k8s.io/yaml`` turns them into strings; a copy, so
    an alias becomes a value of its own (the expansion was bounded before)."""
    if isinstance(value, str):
        return _paired(value)
    if isinstance(value, dict):
        return {_paired(_key(k, v)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        shown = "NaN" if value != value else ("+Inf" if value > 0 else "-Inf")
        raise bad_request(_yaml_error(f"json: unsupported value: {shown}"))
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise bad_request(_yaml_error(f"yaml: unsupported value of type {type(value).__name__}"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _paired(text: str) -> str:
    """``text`` with the surrogate pairs of a YAML ``\\uD800\\uDC00`` escape joined (a lone
    surrogate becomes U+FFFD, as Go's JSON encoder writes invalid UTF-8)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _key(key: Any, value: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return str(key)
    shown = "<nil>" if key is None else repr(key)
    value_shown = json.dumps(value) if isinstance(value, str) else repr(value)
    raise bad_request(
        _yaml_error(
            f"unsupported map key of type: %!s({shown}), key: {shown}, value: {value_shown}"
        )
    )
