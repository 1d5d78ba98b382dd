"""Write options (``dry_run``, ``field_validation``) and server warnings, on the FakeAPI and
with the ``Warning`` header parser (RFC 7234 5.5; client-go's rest/warnings.go semantics: only
code 299 is a warning, deduplication by text)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubectrl._internal.warnings import parse_warning_header, warning_header
from kubectrl.client import (
    AsyncClient,
    BlockingClient,
    DeduplicateWarnings,
    NoWarnings,
    WarningLogger,
    WarningRecorder,
)
from kubectrl.client._warnings import handle_warnings
from kubectrl.errors import BadRequestError, InvalidError
from kubectrl.testing import FakeAPI


def _cm(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"a": "1"},
        **extra,
    }


@pytest.fixture
def recorder() -> WarningRecorder:
    return WarningRecorder()


@pytest.fixture
async def client(recorder: WarningRecorder) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(FakeAPI().config(warning_handler=recorder)) as c:
        yield c


def test_warning_header_round_trip() -> None:
    text = 'unknown field "spec.x" with a \\ backslash'
    header = warning_header(text)
    assert header == '299 - "unknown field \\"spec.x\\" with a \\\\ backslash"'
    assert parse_warning_header(header) == [(299, "-", text)]
    both = '299 - "one", 299 kube-apiserver "two" "Tue, 24 Nov 2026 09:00:00 GMT"'
    assert parse_warning_header(both) == [(299, "-", "one"), (299, "kube-apiserver", "two")]
    with pytest.raises(ValueError, match="malformed Warning header"):
        parse_warning_header("299 no-quotes")


def test_only_code_299_reaches_the_handler_and_dedup_passes_each_text_once() -> None:
    recorder = WarningRecorder()
    dedup = DeduplicateWarnings(recorder)
    handle_warnings(dedup, ['299 - "a"', '199 - "not a warning"', '299 - "a"', '299 - "b"'])
    handle_warnings(dedup, ['299 - "a"'])
    assert recorder.texts == ["a", "b"]
    handle_warnings(NoWarnings(), ['299 - "x"'])  # nothing to assert but that it does not raise


def test_malformed_header_is_logged_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    recorder = WarningRecorder()
    with caplog.at_level(logging.WARNING, logger="kubectrl.client.warnings"):
        handle_warnings(recorder, ["garbage"])
    assert recorder.texts == []
    assert "malformed Warning header 'garbage'" in caplog.text


def test_warning_logger_logs_every_time(caplog: pytest.LogCaptureFixture) -> None:
    handler = WarningLogger()
    with caplog.at_level(logging.WARNING, logger="kubectrl.client.warnings"):
        handler.handle_warning(299, "-", "deprecated")
        handler.handle_warning(299, "-", "deprecated")
    assert [r.getMessage() for r in caplog.records] == ["server warning: deprecated"] * 2


async def test_unknown_fields_warn_by_default(
    client: AsyncClient, recorder: WarningRecorder
) -> None:
    created = await client.create(_cm("w", bogus=1, spec={"x": 2}))
    assert "bogus" not in created
    assert recorder.texts == ['unknown field "bogus"', 'unknown field "spec"']


async def test_field_validation_ignore_says_nothing(
    client: AsyncClient, recorder: WarningRecorder
) -> None:
    await client.create(_cm("i", bogus=1), field_validation="Ignore")
    assert recorder.texts == []


async def test_field_validation_strict_refuses_naming_the_fields(client: AsyncClient) -> None:
    with pytest.raises(BadRequestError, match=r'strict decoding error: unknown field "bogus"'):
        await client.create(_cm("s", bogus=1), field_validation="Strict")
    created = await client.create(_cm("s"), field_validation="Strict")
    created["metadata"]["labels"] = {"x": "y"}
    created["zz"] = 1
    with pytest.raises(BadRequestError, match=r'ConfigMap in version "v1" cannot be handled'):
        await client.update(created, field_validation="Strict")
    with pytest.raises(InvalidError, match=r'unknown field "zz"') as err:
        await client.patch(
            ("v1", "ConfigMap"), "s", {"zz": 1}, namespace="default", field_validation="Strict"
        )
    assert err.value.code == 422


async def test_a_bad_field_validation_value_is_refused_before_sending(
    client: AsyncClient,
) -> None:
    with pytest.raises(ValueError, match="field_validation must be one of Strict, Warn, Ignore"):
        await client.create(_cm("bad"), field_validation="strict")  # type: ignore[arg-type]


async def test_dry_run_create_stores_nothing(client: AsyncClient) -> None:
    answer = await client.create(_cm("dry"), dry_run=True, field_validation="Strict")
    assert answer["metadata"]["name"] == "dry"
    assert (await client.list(("v1", "ConfigMap"), namespace="default"))["items"] == []


async def test_status_and_merge_from_take_the_options(
    client: AsyncClient, recorder: WarningRecorder
) -> None:
    original = await client.create(_cm("m"))
    modified = {**original, "data": {"a": "2"}}
    dry = await client.patch_merge_from(original, modified, dry_run=True)
    assert dry["data"] == {"a": "2"}
    assert (await client.get(("v1", "ConfigMap"), "m", namespace="default"))["data"] == {"a": "1"}
    with pytest.raises(InvalidError, match='unknown field "qq"'):
        await client.patch_merge_from(original, {**modified, "qq": 1}, field_validation="Strict")


def test_blocking_client_takes_the_options() -> None:
    recorder = WarningRecorder()
    with BlockingClient(FakeAPI().config(warning_handler=recorder)) as client:
        client.create(_cm("b", extra=1), dry_run=True)
        assert recorder.texts == ['unknown field "extra"']
        with pytest.raises(BadRequestError, match='unknown field "extra"'):
            client.create(_cm("b", extra=1), field_validation="Strict")
        assert client.list(("v1", "ConfigMap"), namespace="default")["items"] == []


async def test_a_non_ascii_unknown_field_is_warned_intact(
    client: AsyncClient, recorder: WarningRecorder
) -> None:
    await client.create(_cm("u", **{"größe": 1}))
    assert recorder.texts == ['unknown field "größe"']


async def test_the_cached_client_passes_the_options_on(
    client: AsyncClient, recorder: WarningRecorder
) -> None:
    from kubectrl.cache import InformerFactory
    from kubectrl.runtime import CachedClient

    cached = CachedClient(client, InformerFactory(client))
    with pytest.raises(BadRequestError, match='unknown field "x"'):
        await cached.create(_cm("c", x=1), field_validation="Strict")
    cm = await cached.create(_cm("c"), dry_run=True)
    assert cm["metadata"]["name"] == "c"
    assert (await client.list(("v1", "ConfigMap"), namespace="default"))["items"] == []
    stored = await cached.create(_cm("c"))
    with pytest.raises(InvalidError, match='unknown field "q"'):
        await cached.patch_merge_from(stored, {**stored, "q": 1}, field_validation="Strict")
    await cached.patch(
        ("v1", "ConfigMap"), "c", {"zz": 1}, namespace="default", field_validation="Warn"
    )
    assert recorder.texts == ['unknown field "zz"']


async def test_scale_dry_run_and_bad_replicas(client: AsyncClient) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]},
            },
        },
    }
    await client.create(deployment)
    kind = ("apps/v1", "Deployment")
    scale = await client.scale(kind, "web", 4, namespace="default", dry_run=True)
    assert scale["spec"]["replicas"] == 4
    assert (await client.get(kind, "web", namespace="default"))["spec"]["replicas"] == 1
    with pytest.raises(ValueError, match="replicas must be a non-negative integer"):
        await client.scale(kind, "web", -1, namespace="default")
