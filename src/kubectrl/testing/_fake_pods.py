"""What FakeAPI serves of the pods' subresources: logs, exec and eviction.

There is no kubelet in a fake: a test sets each container's log text (:meth:`FakePods.set_log`)
and answers exec with a function of its own (:meth:`FakePods.on_exec`). Eviction checks the
namespace's PodDisruptionBudgets as the real server does for the common cases
(``maxUnavailable: 0``, or ``minAvailable`` not below the matching pods' count): a budget that
allows no disruption answers 429. ``pods/attach``, ``pods/portforward``, ``pods/proxy``,
``services/proxy`` raise :class:`~kubectrl.errors.UnsupportedFeatureError`;
``serviceaccounts/token`` issues tokens (:mod:`kubectrl.testing._fake_tokens`) and
``pods/ephemeralcontainers`` is the API core's (stored and validated; no kubelet runs them).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubectrl.apiserver.inprocess import invalid_name
from kubectrl.errors import UnsupportedFeatureError
from kubectrl.testing._fake_tokens import TokenIssuer, failure

__all__ = ["ExecCall", "ExecHandler", "FakePods"]

_SUBRESOURCE = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/([a-z]+)$")
# Subresources the fake does not serve: no network to proxy to.
_UNSERVED = re.compile(r"^/api/v1/namespaces/[^/]+/(?:(pods|services)/[^/]+/(proxy)(?:/.*)?)$")
_TOKEN = re.compile(r"^/api/v1/namespaces/([^/]+)/serviceaccounts/([^/]+)/token$")


@dataclasses.dataclass(frozen=True)
class ExecCall:
    """One exec a test's handler answers: the pod (as stored), container, command and stdin."""

    pod: dict[str, Any]
    container: str
    command: list[str]
    stdin: bytes


#: A test's exec handler: ``(stdout, stderr, exit_code)`` for an :class:`ExecCall`.
ExecHandler = Callable[[ExecCall], "tuple[bytes, bytes, int]"]


class _MemorySocket:
    """The fake's end of an exec WebSocket: runs the handler when stdin is complete."""

    def __init__(self, run: Callable[[bytes], list[bytes]], wants_stdin: bool) -> None:
        self.subprotocol = "v5.channel.k8s.io"
        self._run = run
        self._stdin = bytearray()
        self._out: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._started = False
        if not wants_stdin:
            self._start()

    def _start(self) -> None:
        if self._started:
            return
        self._started = True
        for message in self._run(bytes(self._stdin)):
            self._out.put_nowait(message)
        self._out.put_nowait(None)

    async def send(self, data: bytes) -> None:
        if not data or self._started:
            return
        if data[0] == 0:
            self._stdin += data[1:]
        elif data[0] == 255 and data[1:2] == b"\x00":
            self._start()

    async def receive(self) -> bytes | None:
        message = await self._out.get()
        if message is None:
            self._out.put_nowait(None)
        return message

    async def close(self) -> None:
        self._out.put_nowait(None)


class _Objects(Protocol):
    """What FakePods needs of its :class:`~kubectrl.testing.FakeAPI` (no import of it: the fake
    imports this module)."""

    _core: Any
    clock: Any

    def objects(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]: ...


class FakePods:
    """The pods' subresources of one :class:`~kubectrl.testing.FakeAPI` (``api.pods``)."""

    def __init__(self, api: _Objects) -> None:
        self._api = api
        self._tokens = TokenIssuer(api.objects, api.clock.wall)
        self._logs: dict[tuple[str, str, str], bytes] = {}
        self._exec: ExecHandler | None = None
        self._budgets: list[dict[str, Any]] = []

    def add_disruption_budget(self, budget: Mapping[str, Any]) -> None:
        """Make eviction respect a PodDisruptionBudget (a ``policy/v1`` object as a dict).

        The API core does not store PodDisruptionBudgets (their defaulting and validation are
        not implemented), so a test declares them here; eviction reads these and any stored.

        Example::

            api.pods.add_disruption_budget({"metadata": {"name": "keep", "namespace": "ns"},
                                            "spec": {"maxUnavailable": 0,
                                                     "selector": {"matchLabels": {"app": "db"}}}})
        """
        meta = budget.get("metadata") or {}
        if not meta.get("name") or not meta.get("namespace"):
            raise ValueError("add_disruption_budget: the budget needs metadata.name and namespace")
        self._budgets.append(dict(budget))

    def set_log(self, namespace: str, pod: str, text: str | bytes, *, container: str = "") -> None:
        """Set the log of a pod's container (``""``: any container without a log of its own),
        as text (UTF-8) or bytes. ``tailLines`` and ``limitBytes`` apply to it; the options that
        need a kubelet's timestamps (``sinceSeconds``, ``sinceTime``, ``timestamps``) and
        ``previous`` raise :class:`~kubectrl.errors.UnsupportedFeatureError`.

        Example::

            api.pods.set_log("default", "db-0", "ready\npartial", container="main")
        """
        self._logs[(namespace, pod, container)] = (
            text.encode() if isinstance(text, str) else bytes(text)
        )

    def on_exec(self, handler: ExecHandler | None) -> None:
        """Answer every exec with ``handler`` (``None``: exec is refused as unsupported).

        Example::

            api.pods.on_exec(lambda call: (b"hi\\n", b"", 0))
        """
        self._exec = handler

    # ---------------------------------------------------------------------------- serving

    def _pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        for pod in self._api.objects("Pod", namespace):
            if pod["metadata"]["name"] == name:
                return pod
        return None

    @staticmethod
    def _container(pod: dict[str, Any], container: str | None) -> tuple[str | None, str]:
        names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or ()]
        name = pod["metadata"]["name"]
        if not container:
            if len(names) == 1:
                return names[0], ""
            return None, (
                f"a container name must be specified for pod {name}, choose one of: {names}"
            )
        if container not in names:
            return None, (
                f"container {container} is not valid for pod {name} out of: {', '.join(names)}"
            )
        return container, ""

    def serve(
        self,
        method: str,
        path: str,
        params: Mapping[str, str],
        body: bytes,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Any] | None:
        """The answer to a pods subresource request this module serves (and to a
        ``TokenRequest``), else ``None``.

        Returns ``(code, body)``: a dict for JSON, ``bytes`` for a log.
        """
        token = _TOKEN.match(path)
        refused = invalid_name(token.group(2)) if token is not None else None
        if refused is not None:
            return refused.code, refused.body
        if token is not None and method == "POST":
            agent = (headers or {}).get("user-agent", "unknown").split("/")[0]
            manager = params.get("fieldManager") or agent
            return self._tokens.serve(token.group(1), token.group(2), body, manager)
        unserved = _UNSERVED.match(path)
        if unserved is not None:
            kind, sub = [group for group in unserved.groups() if group]
            raise UnsupportedFeatureError(f"{kind}/{sub} (FakeAPI has no network to proxy to)")
        match = _SUBRESOURCE.match(path)
        if match is None:
            return None
        namespace, name, sub = match.groups()
        if sub not in ("log", "eviction", "exec", "attach", "portforward"):
            return None
        refused = invalid_name(name)  # before anything else, as the apiserver's registry does
        if refused is not None:
            return refused.code, refused.body
        if sub in ("attach", "portforward"):
            raise UnsupportedFeatureError(f"pods/{sub} (FakeAPI has no containers to reach)")
        pod = self._pod(namespace, name)
        if pod is None:
            return 404, failure(
                404,
                "NotFound",
                f'pods "{name}" not found',
                details={"name": name, "kind": "pods"},
            )
        container: str | None = None
        if sub in ("log", "exec"):
            container, problem = self._container(pod, params.get("container"))
            if container is None:
                return 400, failure(400, "BadRequest", problem)
        if sub == "log" and method == "GET":
            for option in ("sinceSeconds", "sinceTime", "timestamps", "previous"):
                if params.get(option):
                    raise UnsupportedFeatureError(
                        f"pods/log with {option} (FakeAPI's logs have no times and no "
                        "previous container)"
                    )
            text = self._logs.get((namespace, name, container or ""))
            if text is None:
                text = self._logs.get((namespace, name, ""), b"")
            if params.get("tailLines"):
                lines = text.splitlines(keepends=True)
                tail = int(params["tailLines"])
                text = b"".join(lines[-tail:]) if tail else b""
            if params.get("limitBytes"):
                text = text[: int(params["limitBytes"])]
            return 200, text
        if sub == "eviction" and method == "POST":
            return self._evict(namespace, name, pod, body, params)
        if sub == "exec":
            return 400, failure(400, "BadRequest", "Upgrade request required")
        return 405, failure(405, "MethodNotAllowed", f"{method} is not allowed on pods/{sub}")

    def _evict(
        self,
        namespace: str,
        name: str,
        pod: dict[str, Any],
        body: bytes,
        params: Mapping[str, str],
    ) -> tuple[int, Any]:
        labels = pod["metadata"].get("labels") or {}
        pods = self._api.objects("Pod", namespace)
        budgets = [b for b in self._budgets if b["metadata"]["namespace"] == namespace]
        for pdb in budgets + self._api.objects("PodDisruptionBudget", namespace):
            selector = (pdb.get("spec") or {}).get("selector") or {}
            wanted = selector.get("matchLabels") or {}
            if selector.get("matchExpressions"):
                raise UnsupportedFeatureError(
                    "eviction against a PodDisruptionBudget with matchExpressions"
                )
            if not wanted or any(labels.get(k) != v for k, v in wanted.items()):
                continue
            matching = [
                p for p in pods if all((p["metadata"].get("labels") or {}).get(k) == v
                                       for k, v in wanted.items())
            ]  # fmt: skip
            spec = pdb.get("spec") or {}
            if isinstance(spec.get("maxUnavailable"), str) or isinstance(
                spec.get("minAvailable"), str
            ):
                raise UnsupportedFeatureError("eviction against a percentage budget")
            blocked = spec.get("maxUnavailable") == 0 or (
                "minAvailable" in spec and len(matching) - 1 < int(spec["minAvailable"])
            )
            if blocked:
                return 429, failure(
                    429,
                    "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    details={
                        "causes": [
                            {
                                "reason": "DisruptionBudget",
                                "message": (
                                    f"The disruption budget {pdb['metadata']['name']} needs "
                                    f"{spec.get('minAvailable', len(matching))} healthy pods "
                                    f"and has {len(matching)} currently"
                                ),
                            }
                        ]
                    },
                )
        request = json.loads(body) if body else {}
        options = request.get("deleteOptions") or {}
        if "All" not in (options.get("dryRun") or ()):
            self._delete(namespace, name)
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                     "code": 201}  # fmt: skip

    def _delete(self, namespace: str, name: str) -> None:
        from kubectrl.apiserver.inprocess import Reply, Request

        core = self._api._core
        request = Request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {}, {}, b"")
        found = core.route(request)
        if not isinstance(found, Reply):
            core.serve(found, request)

    async def open_websocket(
        self, path: str, query: list[tuple[str, str]], protocols: list[str]
    ) -> _MemorySocket:
        """The in-memory exec WebSocket (``FakeAPI``'s transport calls this)."""
        from kubectrl._internal.websocket import WebSocketRefusedError

        match = _SUBRESOURCE.match(path)
        if match is None or match.group(3) != "exec":
            what = match.group(3) if match else path
            raise UnsupportedFeatureError(f"WebSocket to {what} (FakeAPI serves pods/exec only)")
        # The path is as the client wrote it (escaped); the server reads it decoded.
        namespace, name = (urllib.parse.unquote(part) for part in match.groups()[:2])
        refused = invalid_name(name)
        if refused is not None:
            raise WebSocketRefusedError(refused.code, str(refused.body.get("message", "")))
        params: dict[str, str] = {}
        command = [value for key, value in query if key == "command"]
        for key, value in query:
            params.setdefault(key, value)
        pod = self._pod(namespace, name)
        if pod is None:
            raise WebSocketRefusedError(404, f'pods "{name}" not found')
        container, problem = self._container(pod, params.get("container"))
        if container is None:
            raise WebSocketRefusedError(400, problem)
        handler = self._exec
        if handler is None:
            raise UnsupportedFeatureError(
                "pods/exec without a handler (set one with FakeAPI.pods.on_exec)"
            )

        def run(stdin: bytes) -> list[bytes]:
            out, err, code = handler(ExecCall(pod, container, command, stdin))
            messages = []
            if out:
                messages.append(b"\x01" + out)
            if err:
                messages.append(b"\x02" + err)
            if code == 0:
                status: dict[str, Any] = {"metadata": {}, "status": "Success"}
            else:
                status = {
                    "metadata": {},
                    "status": "Failure",
                    "message": f"command terminated with non-zero exit code: exit status {code}",
                    "reason": "NonZeroExitCode",
                    "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
                }
            messages.append(b"\x03" + json.dumps(status).encode())
            return messages

        return _MemorySocket(run, params.get("stdin") == "true")
