"""Exec credential plugins (``users[].user.exec``), run by kubectrl itself.

The plugin protocol is client-go's (``client.authentication.k8s.io`` ``ExecCredential``): the
command runs with the kubeconfig's ``env`` entries added to ours and ``KUBERNETES_EXEC_INFO``
holding an ``ExecCredential`` spec; it prints an ``ExecCredential`` whose ``status`` carries a
``token`` and/or ``clientCertificateData``/``clientKeyData``, optionally with an
``expirationTimestamp``. The credential is cached until that timestamp has passed, and the
plugin runs again once after a 401, as client-go's exec authenticator does.

We run the plugin ourselves rather than through the ``kubernetes`` package so that a plugin that
is missing or fails raises :class:`~kubectrl.errors.ConfigError` (naming the kubeconfig file, the
user and the command) instead of being logged and followed by anonymous requests, and so that the
plugin's stderr, which often echoes what it was given (``login failed for password=...``), never
reaches a log or an exception message. client-go passes stderr through to the terminal; a
controller has none, and its stderr usually ends up in a log collector, so we drop it and report
only its size.

A controller never has a terminal, so the plugin always gets ``interactive: false`` and no
stdin; ``interactiveMode: Always`` is rejected when the kubeconfig is loaded.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from kubectrl.errors import ConfigError

__all__ = ["EXEC_TIMEOUT", "ExecCredential", "ExecCredentials", "ExecPlugin"]

#: Seconds a plugin may run before it is killed and the load (or request) fails. client-go sets
#: no limit; a controller whose plugin hangs would otherwise hang every request behind it.
EXEC_TIMEOUT = 60.0

_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
_INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


@dataclasses.dataclass(frozen=True)
class ExecCredential:
    """What one run of a plugin produced. ``repr`` shows no secret."""

    token: str | None = dataclasses.field(default=None, repr=False)
    client_certificate: bytes | None = dataclasses.field(default=None, repr=False)
    client_key: bytes | None = dataclasses.field(default=None, repr=False)
    #: Wall-clock expiry (seconds since the epoch), or ``None`` when the plugin gave none.
    expires_at: float | None = None


@dataclasses.dataclass(frozen=True)
class ExecPlugin:
    """One kubeconfig ``exec`` entry, checked, with its command resolved.

    ``where`` is the kubeconfig file and ``user`` the user entry's name; both go into every error.
    """

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    api_version: str
    where: str
    user: str
    install_hint: str = ""
    cluster_info: Mapping[str, Any] | None = dataclasses.field(default=None, repr=False)
    timeout: float = EXEC_TIMEOUT

    @classmethod
    def from_kubeconfig(
        cls,
        spec: Any,
        *,
        path: str,
        user: str,
        cluster_info: Mapping[str, Any] | None,
    ) -> ExecPlugin:
        """Check a kubeconfig ``exec`` mapping; a relative command containing a path separator
        is resolved against the kubeconfig's directory (client-go's ``ResolvePaths``)."""
        field = f"users[name={user}].user.exec"
        if not isinstance(spec, Mapping):
            raise ConfigError("must be a mapping", path=path, field=field)
        api_version = spec.get("apiVersion")
        if api_version not in _API_VERSIONS:
            raise ConfigError(
                f"unsupported exec plugin apiVersion {api_version!r} "
                f"(supported: {', '.join(_API_VERSIONS)})",
                path=path,
                field=f"{field}.apiVersion",
            )
        mode = spec.get("interactiveMode") or ("" if api_version.endswith("/v1") else "IfAvailable")
        if mode not in _INTERACTIVE_MODES:
            raise ConfigError(
                f"must be one of {', '.join(_INTERACTIVE_MODES)} (required by {api_version})",
                path=path,
                field=f"{field}.interactiveMode",
            )
        command = spec.get("command")
        if not isinstance(command, str) or not command:
            raise ConfigError("is missing", path=path, field=f"{field}.command")
        if mode == "Always":
            raise ConfigError(
                f"exec plugin {command!r} for user {user!r} needs a terminal "
                "(interactiveMode: Always), and a controller has none",
                path=path,
                field=f"{field}.interactiveMode",
            )
        args = spec.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError("must be a list of strings", path=path, field=f"{field}.args")
        env: list[tuple[str, str]] = []
        for i, item in enumerate(spec.get("env") or []):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise ConfigError("needs a name and a value", path=path, field=f"{field}.env[{i}]")
            env.append((item["name"], str(item.get("value") or "")))
        if os.sep in command and not os.path.isabs(command):
            base = os.path.dirname(os.path.abspath(path))
            command = os.path.normpath(os.path.join(base, command))
        return cls(
            command=command,
            args=tuple(args),
            env=tuple(env),
            api_version=api_version,
            where=path,
            user=user,
            install_hint=str(spec.get("installHint") or ""),
            cluster_info=cluster_info if spec.get("provideClusterInfo") else None,
        )

    def _error(self, message: str) -> ConfigError:
        return ConfigError(
            f"exec plugin {self.command!r} for user {self.user!r}: {message}",
            path=self.where,
            field=f"users[name={self.user}].user.exec",
        )

    def _resolve(self, environ: Mapping[str, str]) -> str:
        found = shutil.which(self.command, path=environ.get("PATH"))
        if found is None:
            hint = f" ({self.install_hint.strip()})" if self.install_hint.strip() else ""
            raise self._error(f"executable not found{hint}")
        return found

    def run(self) -> ExecCredential:
        """Run the plugin once and parse its ``ExecCredential``.

        Raises :class:`~kubectrl.errors.ConfigError` naming the file, user and command when the
        command is missing, fails, times out or prints something that is not a credential. The
        message never contains the plugin's output.
        """
        environ = dict(os.environ)
        environ.update(self.env)
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster_info is not None:
            spec["cluster"] = dict(self.cluster_info)
        environ["KUBERNETES_EXEC_INFO"] = json.dumps(
            {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}
        )
        executable = self._resolve(environ)
        try:
            done = subprocess.run(
                [executable, *self.args],
                env=environ,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise self._error(f"did not finish within {self.timeout:g} s") from None
        except OSError as err:
            raise self._error(f"cannot run: {err.strerror}") from None
        if done.returncode != 0:
            raise self._error(
                f"failed with exit code {done.returncode} (its {len(done.stderr)} bytes of "
                "stderr are not shown: they may hold secrets)"
            )
        return self._parse(done.stdout)

    def _parse(self, stdout: bytes) -> ExecCredential:
        try:
            data = json.loads(stdout)
        except ValueError:
            raise self._error("stdout is not an ExecCredential JSON document") from None
        if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
            raise self._error("stdout is not an ExecCredential")
        if data.get("apiVersion") != self.api_version:
            raise self._error(
                f"is configured for {self.api_version} but returned {data.get('apiVersion')!r}"
            )
        status = data.get("status")
        if not isinstance(status, dict):
            raise self._error("returned no status")
        token = status.get("token") or None
        cert = status.get("clientCertificateData") or None
        key = status.get("clientKeyData") or None
        if token is None and cert is None and key is None:
            raise self._error("returned neither a token nor a client certificate and key")
        if (cert is None) != (key is None):
            raise self._error("returned only one of clientCertificateData and clientKeyData")
        expires_at = None
        stamp = status.get("expirationTimestamp")
        if stamp:
            try:
                # Python 3.10's fromisoformat takes neither "Z" nor more than 6 fraction digits.
                text = re.sub(r"(\.\d{6})\d+", r"\1", str(stamp).replace("Z", "+00:00"))
                parsed = datetime.datetime.fromisoformat(text)
            except ValueError:
                raise self._error(f"expirationTimestamp {stamp!r} is not RFC 3339") from None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=datetime.timezone.utc)
            expires_at = parsed.timestamp()
        return ExecCredential(
            token=str(token) if token else None,
            client_certificate=str(cert).encode() if cert else None,
            client_key=str(key).encode() if key else None,
            expires_at=expires_at,
        )


class ExecCredentials:
    """A :class:`~kubectrl.client._auth.CredentialSource` backed by an exec plugin.

    The credential is cached until its ``expirationTimestamp`` has passed (client-go's
    ``credsExpired``: strictly after, on the wall clock); a 401 runs the plugin once more. Any
    failure raises :class:`~kubectrl.errors.ConfigError`: a request never goes out anonymous
    because the plugin failed.

    Example::

        source = ExecCredentials(plugin)            # runs the plugin now
        source.authorization()                      # "Bearer ..."
    """

    blocking = True

    def __init__(self, plugin: ExecPlugin, *, now: Callable[[], float] = time.time) -> None:
        self.plugin = plugin
        self._now = now
        self._lock = threading.Lock()
        self._credential = plugin.run()

    @property
    def credential(self) -> ExecCredential:
        """The credential cached now (its client certificate is what TLS uses)."""
        return self._credential

    def _expired(self) -> bool:
        expires = self._credential.expires_at
        return expires is not None and self._now() > expires

    def authorization(self) -> str | None:
        with self._lock:
            if self._expired():
                self._credential = self.plugin.run()
            token = self._credential.token
        return f"Bearer {token}" if token else None

    def invalidate(self) -> bool:
        with self._lock:
            self._credential = self.plugin.run()
        return True

    def __repr__(self) -> str:
        return f"ExecCredentials(command={self.plugin.command!r}, user={self.plugin.user!r})"


def cluster_info(cluster: Mapping[str, Any], ca_data: bytes | None) -> dict[str, Any]:
    """The ``spec.cluster`` handed to a plugin with ``provideClusterInfo: true``."""
    info: dict[str, Any] = {"server": cluster.get("server")}
    if ca_data:
        info["certificate-authority-data"] = base64.b64encode(ca_data).decode("ascii")
    for key in ("tls-server-name", "insecure-skip-tls-verify", "proxy-url"):
        if cluster.get(key):
            info[key] = cluster[key]
    extensions = cluster.get("extensions") or []
    for ext in extensions if isinstance(extensions, list) else []:
        if isinstance(ext, Mapping) and ext.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = ext.get("extension")
    return info
