"""The HTTPS webhook server, called over TLS with httpx as the API server would call it.

Pinned behaviour: controller-runtime pkg/webhook/admission/http.go (an empty body, a content type
other than application/json or an undecodable review is answered with an AdmissionReview whose
response has code 400, HTTP 200; the response echoes the request's uid) and
pkg/webhook/conversion/conversion.go (an undecodable ConversionReview is HTTP 400; a failed
conversion answers result.status Failure with the message).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import socket
import ssl
from pathlib import Path

import httpx
import pytest
from cryptography import x509

from kubectrl._internal.clock import FakeClock
from kubectrl.testing import eventually
from kubectrl.webhook import (
    PROBE_PATH,
    AdmissionRequest,
    AdmissionResponse,
    DefaultingHandler,
    WebhookServer,
    WebhookServerOptions,
)
from kubectrl.webhook._server import PROBE_MESSAGE

from .conftest import Pair, make_pair, write_pair
from .test_webhook_admission import FooValidator, TypedDefaulter
from .webhook_models import Foo, FooV1beta1, admission_review, foo

UID = "4b1a6c4e-0000-4000-8000-000000000001"


def url(server: WebhookServer, path: str) -> str:
    return f"https://127.0.0.1:{server.port}{path}"


async def post_review(
    client: httpx.AsyncClient, server: WebhookServer, path: str, review: dict
) -> dict:
    response = await client.post(url(server, path), json=review)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    return answer["response"]


async def test_defaulting_and_validation_over_https(
    server: WebhookServer, client: httpx.AsyncClient
) -> None:
    from kubectrl.webhook import ValidatingHandler

    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    server.register("/validate", ValidatingHandler(Foo, FooValidator()))
    async with server:
        assert server.port != 0
        mutated = await post_review(
            client, server, "/mutate", admission_review("CREATE", foo(deploymentName="w"))
        )
        assert mutated["uid"] == UID
        assert mutated["allowed"] is True
        assert mutated["patchType"] == "JSONPatch"
        assert json.loads(base64.b64decode(mutated["patch"])) == [
            {"op": "add", "path": "/spec/replicas", "value": 1}
        ]
        refused = await post_review(client, server, "/validate", admission_review("CREATE", foo()))
        assert refused == {
            "uid": UID,
            "allowed": False,
            "status": {
                "code": 403,
                "message": "spec.deploymentName is required",
                "reason": "Forbidden",
            },
        }
        warned = await post_review(
            client,
            server,
            "/validate",
            admission_review("CREATE", foo(deploymentName="w", replicas=6)),
        )
        assert warned["allowed"] is True
        assert warned["warnings"] == ["replicas above 5 cost money"]


async def test_probe_path_is_always_served(
    server: WebhookServer, client: httpx.AsyncClient
) -> None:
    async with server:
        answer = await post_review(client, server, PROBE_PATH, admission_review("CREATE", foo()))
    assert answer["uid"] == UID
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 403
    assert answer["status"]["message"] == PROBE_MESSAGE == "kubectrl webhook probe"


class Hanging:
    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Raising:
    async def handle(self, req: AdmissionRequest) -> AdmissionResponse:
        raise RuntimeError("handler exploded")


@pytest.mark.parametrize(
    ("content", "headers", "fragment"),
    [
        (b"", {"Content-Type": "application/json"}, "request body is empty"),
        (b"{not json", {"Content-Type": "application/json"}, "cannot decode the AdmissionReview"),
        (
            json.dumps(admission_review("CREATE", foo())).encode(),
            {"Content-Type": "text/plain"},
            "contentType=text/plain, expected application/json",
        ),
        (
            b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}',
            {"Content-Type": "application/json"},
            "the AdmissionReview has no request",
        ),
        (b"[1, 2]", {"Content-Type": "application/json"}, "not a JSON object"),
        (
            b'{"request": {"operation": "CREATE"}}',
            {"Content-Type": "application/json"},
            "request.uid is missing",
        ),
    ],
)
async def test_malformed_admission_requests_are_400_and_the_server_keeps_serving(
    server: WebhookServer,
    client: httpx.AsyncClient,
    content: bytes,
    headers: dict[str, str],
    fragment: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "kubectrl.webhook")
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    async with server:
        response = await client.post(url(server, "/mutate"), content=content, headers=headers)
        assert response.status_code == 200
        answer = response.json()["response"]
        assert answer["allowed"] is False
        assert answer["status"]["code"] == 400
        assert fragment in answer["status"]["message"]
        assert any(fragment in r.getMessage() for r in caplog.records)
        # still serving
        ok = await post_review(
            client, server, "/mutate", admission_review("CREATE", foo(deploymentName="w"))
        )
        assert ok["allowed"] is True


@pytest.mark.parametrize(
    ("handler", "fragment"),
    [(Hanging(), "timed out after 10 s"), (Raising(), "RuntimeError: handler exploded")],
)
async def test_failing_handlers_are_500_logged_with_the_object(
    server: WebhookServer,
    client: httpx.AsyncClient,
    clock: FakeClock,
    handler: object,
    fragment: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A handler past the (fake) 10 s timeout or raising: a 500 naming it; still serving."""
    caplog.set_level(logging.ERROR, "kubectrl.webhook")
    server.register("/bad", handler)  # type: ignore[arg-type]
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    async with server:
        call = asyncio.ensure_future(
            post_review(client, server, "/bad", admission_review("UPDATE", foo(), foo()))
        )
        if isinstance(handler, Hanging):
            await eventually(lambda: clock.sleepers() == 1, describe="the handler's timer")
            clock.advance(9.9)
            assert clock.sleepers() == 1  # not due yet: the handler is still waited for
            clock.advance(0.1)
        answer = await call
        assert answer["uid"] == UID
        assert answer["allowed"] is False
        assert answer["status"]["code"] == 500
        assert fragment in answer["status"]["message"]
        assert "/bad" in answer["status"]["message"]
        [record] = [r for r in caplog.records if fragment in r.getMessage()]
        assert "kind Foo" in record.getMessage()
        assert "default/example-foo" in record.getMessage()
        assert UID in record.getMessage()
        assert (record.kind, record.object, record.uid) == ("Foo", "default/example-foo", UID)  # type: ignore[attr-defined]
        ok = await post_review(
            client, server, "/mutate", admission_review("CREATE", foo(deploymentName="w"))
        )
        assert ok["allowed"] is True
        assert clock.sleepers() == 0  # no timer left behind


async def test_unknown_path_and_method(server: WebhookServer, client: httpx.AsyncClient) -> None:
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    async with server:
        assert (await client.post(url(server, "/nowhere"), json={})).status_code == 404
        assert (await client.get(url(server, "/mutate"))).status_code == 405


def test_register_refuses_duplicates_and_the_probe_path(server: WebhookServer) -> None:
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    with pytest.raises(ValueError, match="already registered at /mutate"):
        server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    with pytest.raises(ValueError, match="kubectrl-webhook-probe"):
        server.register(PROBE_PATH, DefaultingHandler(Foo, TypedDefaulter()))
    with pytest.raises(TypeError, match="neither an AdmissionHandler"):
        server.register("/x", object())  # type: ignore[arg-type]


async def test_missing_certificate_names_the_file(tmp_path: Path) -> None:
    server = WebhookServer(WebhookServerOptions(port=0, cert_dir=str(tmp_path)))
    with pytest.raises(FileNotFoundError, match=r"no tls\.crt in .*cert_dir"):
        await server.start()
    assert not server.serving


def test_default_options_are_controller_runtimes() -> None:
    options = WebhookServerOptions()
    assert (options.host, options.port, options.cert_name, options.key_name) == (
        "",
        9443,
        "tls.crt",
        "tls.key",
    )
    assert options.cert_directory().parts[-2:] == ("k8s-webhook-server", "serving-certs")


def served_serial(port: int, ca_pems: list[bytes]) -> int:
    """Handshake as the API server does (no SNI for an IP address) and read the serial."""
    context = ssl.create_default_context(cadata="".join(p.decode() for p in ca_pems))
    context.check_hostname = False
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw) as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


async def test_certificate_files_replaced_are_served_without_restart(
    server: WebhookServer, cert_dir: Path, pair: Pair, client: httpx.AsyncClient
) -> None:
    """pkg/certwatcher/certwatcher.go: new files on disk are served on the next handshake."""
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    second = make_pair()
    assert second.serial != pair.serial
    async with server:
        port = server.port
        assert await asyncio.to_thread(served_serial, port, [pair.cert_pem]) == pair.serial
        write_pair(cert_dir, second)

        async def new_serial() -> bool:
            serial = await asyncio.to_thread(served_serial, port, [pair.cert_pem, second.cert_pem])
            return serial == second.serial

        await eventually(new_serial, timeout=20, describe="the new certificate is served")
        assert server.port == port
        # and admission over a client trusting only the new certificate works
        context = ssl.create_default_context(cadata=second.cert_pem.decode())
        async with httpx.AsyncClient(verify=context) as fresh:
            ok = await post_review(
                fresh, server, "/mutate", admission_review("CREATE", foo(deploymentName="w"))
            )
        assert ok["allowed"] is True


async def test_a_broken_pair_keeps_the_previous_certificate(
    server: WebhookServer, cert_dir: Path, pair: Pair, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "kubectrl.webhook")
    async with server:
        (cert_dir / "tls.crt").write_bytes(make_pair().cert_pem)  # key does not match
        assert server.reload_certificates() is False
        assert await asyncio.to_thread(served_serial, server.port, [pair.cert_pem]) == pair.serial
        assert any("keeping the previous one" in r.getMessage() for r in caplog.records)


async def test_tls_1_2_is_the_minimum(server: WebhookServer, pair: Pair) -> None:
    async with server:
        assert server._certs is not None
        assert server._certs.listening.minimum_version == ssl.TLSVersion.TLSv1_2
        assert server._certs.context.minimum_version == ssl.TLSVersion.TLSv1_2

        def handshake() -> str | None:
            context = ssl.create_default_context(cadata=pair.cert_pem.decode())
            context.check_hostname = False
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            with (
                socket.create_connection(("127.0.0.1", server.port), timeout=10) as raw,
                context.wrap_socket(raw) as tls,
            ):
                return tls.version()

        assert await asyncio.to_thread(handshake) == "TLSv1.2"


async def test_conversion_over_https(server: WebhookServer, client: httpx.AsyncClient) -> None:
    server.conversion_handler().add(Foo, FooV1beta1)
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": UID,
            "desiredAPIVersion": "samplecontroller.k8s.io/v1beta1",
            "objects": [foo("a", deploymentName="web", replicas=2), foo("b", deploymentName="db")],
        },
    }
    async with server:
        response = await client.post(url(server, "/convert"), json=review)
        assert response.status_code == 200
        answer = response.json()
        assert answer["kind"] == "ConversionReview"
        assert answer["response"]["uid"] == UID
        assert answer["response"]["result"] == {"status": "Success"}
        converted = answer["response"]["convertedObjects"]
        assert [c["spec"] for c in converted] == [
            {"deployment": {"name": "web", "replicas": 2}},
            {"deployment": {"name": "db"}},
        ]
        assert {c["apiVersion"] for c in converted} == {"samplecontroller.k8s.io/v1beta1"}
        garbage = await client.post(
            url(server, "/convert"), content=b"{nope", headers={"Content-Type": "application/json"}
        )
        assert garbage.status_code == 400
        assert "malformed ConversionReview" in garbage.text
        no_request = await client.post(url(server, "/convert"), json={"kind": "ConversionReview"})
        assert no_request.status_code == 400
        assert "no request" in no_request.text
        again = await client.post(url(server, "/convert"), json=review)
        assert again.json()["response"]["result"] == {"status": "Success"}


async def test_registration_after_start_is_served(
    server: WebhookServer, client: httpx.AsyncClient
) -> None:
    async with server:
        before = await client.post(url(server, "/late"), json={})
        assert before.status_code == 404
        server.register("/late", DefaultingHandler(Foo, TypedDefaulter()))
        answer = await post_review(
            client, server, "/late", admission_review("CREATE", foo(deploymentName="w"))
        )
        assert answer["allowed"] is True


async def test_a_busy_port_names_the_address(server: WebhookServer, cert_dir: Path) -> None:
    async with server:
        second = WebhookServer(
            WebhookServerOptions(host="127.0.0.1", port=server.port, cert_dir=str(cert_dir))
        )
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{server.port}"):
            await second.start()
        assert not second.serving


async def test_keep_alive_connections_are_reused(
    server: WebhookServer, client: httpx.AsyncClient
) -> None:
    """The API server keeps connections to webhooks open; several reviews on one connection."""
    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    async with server:
        peers = set()
        for _ in range(3):
            async with client.stream(
                "POST",
                url(server, "/mutate"),
                json=admission_review("CREATE", foo(deploymentName="w")),
            ) as response:
                stream = response.extensions["network_stream"]
                peers.add(stream.get_extra_info("client_addr"))
                await response.aread()
                assert response.json()["response"]["allowed"] is True
        assert len(peers) == 1


def test_importing_the_webhook_package_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, kubectrl, kubectrl.webhook, kubectrl.runtime; "
        "print(sorted(m for m in ('aiohttp', 'pydantic', 'kubernetes') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_body_over_the_limit_is_a_400(
    server: WebhookServer, client: httpx.AsyncClient
) -> None:
    from kubectrl.webhook._server import MAX_REQUEST_BYTES

    server.register("/mutate", DefaultingHandler(Foo, TypedDefaulter()))
    big = foo(deploymentName="w")
    big["spec"]["padding"] = "x" * (MAX_REQUEST_BYTES + 1)
    async with server:
        response = await client.post(url(server, "/mutate"), json=admission_review("CREATE", big))
        answer = response.json()["response"]
        assert answer["status"]["code"] == 400
        assert f"larger than {MAX_REQUEST_BYTES} bytes" in answer["status"]["message"]
        ok = await post_review(
            client, server, "/mutate", admission_review("CREATE", foo(deploymentName="w"))
        )
        assert ok["allowed"] is True


async def test_every_interface_on_a_free_port_is_one_port(cert_dir: Path, pair: Pair) -> None:
    """host "" (every interface) with port 0: IPv4 and IPv6 listen on the same port."""
    server = WebhookServer(WebhookServerOptions(port=0, cert_dir=str(cert_dir)))
    async with server:
        assert server._runner is not None
        ports = {address[1] for address in server._runner.addresses}
        assert ports == {server.port}
        assert await asyncio.to_thread(served_serial, server.port, [pair.cert_pem]) == pair.serial
