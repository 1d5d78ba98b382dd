"""Kubeconfigs from untrusted places (Secrets, watched files, ClusterProfiles), checked first.

A kubeconfig is code as much as data: ``users[].user.exec`` and ``auth-provider`` run programs,
and file references (``tokenFile``, ``client-key``, ``certificate-authority``) read files of the
process that loads it. A kubeconfig written into a Secret by whoever may write Secrets there
could otherwise run a command in the controller's pod, or send the pod's own service account
token (``tokenFile: /var/run/secrets/...``) to a server of its choosing. So, by default, every
one of those is refused with an error naming the source and the field, and the size is bounded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import tempfile
from typing import Any

from kubectrl.client import ClientConfig, load_kubeconfig
from kubectrl.errors import ConfigError

__all__ = ["MAX_KUBECONFIG_BYTES", "KubeconfigPolicy", "load_untrusted_kubeconfig"]

#: The largest kubeconfig accepted from an untrusted place (1 MiB, a Secret's own limit).
MAX_KUBECONFIG_BYTES = 1024 * 1024

_FILE_KEYS = {
    "clusters": ("cluster", ("certificate-authority",)),
    "users": ("user", ("client-certificate", "client-key", "tokenFile")),
}

_INLINE = {"tokenFile": "token"} | {
    key: f"{key}-data" for key in ("certificate-authority", "client-certificate", "client-key")
}


@dataclasses.dataclass(frozen=True)
class KubeconfigPolicy:
    """What an untrusted kubeconfig may do beyond inline data.

    ``allow_exec``: run ``exec`` credential plugins and ``auth-provider`` helpers it names
    (off: only a kubeconfig its writer could not use to run a command is accepted).
    ``allow_files``: follow file references (off: a kubeconfig cannot read this process's
    files, such as its service account token). ``max_bytes``: the size bound.

    Example::

        >>> KubeconfigPolicy().allow_exec
        False
    """

    allow_exec: bool = False
    allow_files: bool = False
    max_bytes: int = MAX_KUBECONFIG_BYTES


def _parse(data: bytes, source: str) -> dict[str, Any]:
    yaml: Any = importlib.import_module("yaml")
    try:
        parsed = yaml.safe_load(data)
    except yaml.YAMLError as err:
        # Never str(err): PyYAML quotes the offending line, which may hold a credential.
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"malformed YAML{where}", path=source) from None
    if not isinstance(parsed, dict):
        raise ConfigError(
            f"malformed kubeconfig: top level is a {type(parsed).__name__}, not a mapping",
            path=source,
        )
    return parsed


def _check(parsed: dict[str, Any], source: str, policy: KubeconfigPolicy) -> None:
    for section, (inner, file_keys) in _FILE_KEYS.items():
        entries = parsed.get(section) or []
        if not isinstance(entries, list):
            raise ConfigError("must be a list", path=source, field=section)
        for i, entry in enumerate(entries):
            body = entry.get(inner) if isinstance(entry, dict) else None
            if not isinstance(body, dict):
                continue  # load_kubeconfig reports the shape
            name = entry.get("name", i)
            if not policy.allow_files:
                for key in file_keys:
                    if body.get(key):
                        raise ConfigError(
                            "file references are refused in an untrusted kubeconfig (inline "
                            f"it as {_INLINE[key]}, or allow_files=True)",
                            path=source,
                            field=f"{section}[name={name}].{inner}.{key}",
                        )
            if section == "users" and not policy.allow_exec:
                for key in ("exec", "auth-provider"):
                    if body.get(key):
                        raise ConfigError(
                            f"{key} credential plugins are refused in an untrusted kubeconfig "
                            "(they run a program; allow_exec=True to accept them)",
                            path=source,
                            field=f"users[name={name}].user.{key}",
                        )


def load_untrusted_kubeconfig(
    data: bytes | str,
    *,
    source: str,
    context: str | None = None,
    policy: KubeconfigPolicy | None = None,
) -> ClientConfig:
    """A :class:`~kubectrl.client.ClientConfig` from kubeconfig text that came from elsewhere.

    ``source`` names where it came from (``secret ns/name key kubeconfig``); every error is a
    :class:`~kubectrl.errors.ConfigError` that names it and the field at fault, never a value.
    Refused unless ``policy`` allows them: more than ``max_bytes``, ``exec`` and
    ``auth-provider`` users, file references. Everything else is checked by
    :func:`~kubectrl.client.load_kubeconfig` (server URL, base64 data, certificates...).

    Example::

        >>> from kubectrl.errors import ConfigError
        >>> text = '''
        ... clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
        ... users: [{name: u, user: {tokenFile: /var/run/secrets/token}}]
        ... contexts: [{name: x, context: {cluster: c, user: u}}]
        ... current-context: x
        ... '''
        >>> try:
        ...     load_untrusted_kubeconfig(text, source="secret fleet/east")
        ... except ConfigError as err:
        ...     print(err.field)
        users[name=u].user.tokenFile
    """
    policy = policy if policy is not None else KubeconfigPolicy()
    raw = data.encode() if isinstance(data, str) else bytes(data)
    if len(raw) > policy.max_bytes:
        raise ConfigError(
            f"kubeconfig is {len(raw)} bytes, over the limit of {policy.max_bytes}", path=source
        )
    if not raw.strip():
        raise ConfigError("kubeconfig is empty", path=source)
    _check(_parse(raw, source), source, policy)
    fd, path = tempfile.mkstemp(prefix="kubectrl-mc-", suffix=".kubeconfig")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        try:
            config = load_kubeconfig(path, context=context)
        except ConfigError as err:
            # Name the source, not the throw-away file the text passed through.
            text = str(err).removeprefix(f"{err.path}: " if err.path else "")
            text = text.removeprefix(f"{err.field}: " if err.field else "")
            raise ConfigError(text.replace(path, source), path=source, field=err.field) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    return config.with_options(source=source)
