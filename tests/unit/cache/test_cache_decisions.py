"""The reflector's decisions, one test per branch of the pure step function."""

from __future__ import annotations

import pytest

from kubectrl.cache import BackoffPolicy, ReflectorOptions
from kubectrl.cache._decisions import (
    ErrorKind,
    ListAction,
    ListFailed,
    ListSucceeded,
    ReflectorState,
    Start,
    WatchAction,
    WatchEnded,
    classify_error,
    step,
)
from kubectrl.errors import (
    APIConnectionError,
    ExpiredError,
    ForbiddenError,
    GoneError,
    InternalError,
    MalformedStreamError,
    RequestTimeoutError,
    ServerTimeoutError,
    TooManyRequestsError,
    WatchStalledError,
)

LIST_ONLY = ReflectorOptions(streaming_list=False)
STREAMING = ReflectorOptions(streaming_list=True)


def listed(rv: str = "100", options: ReflectorOptions = LIST_ONLY) -> ReflectorState:
    state = ReflectorState.initial(options)
    _, state = step(state, Start(), now=0.0, rand=0.0)
    _, state = step(state, ListSucceeded(rv), now=0.0, rand=0.0)
    return state


def ended(error: ErrorKind | None, *, duration: float = 60.0, events: int = 3, rv: str = "150"):
    return WatchEnded(error=error, duration=duration, events=events, resource_version=rv)


# ------------------------------------------------------------------ start and list


def test_first_list_is_rv_0_paged_500() -> None:
    decision, _ = step(ReflectorState.initial(LIST_ONLY), Start(), now=0.0, rand=0.3)
    assert decision == type(decision)(ListAction("0", 500), 0.0, "start")


def test_list_success_watches_from_its_rv_with_bookmarks_and_random_timeout() -> None:
    state = ReflectorState.initial(LIST_ONLY)
    for rand, timeout in [(0.0, 300), (0.5, 450), (0.999999, 599)]:
        decision, new = step(state, ListSucceeded("42"), now=5.0, rand=rand)
        assert decision.action == WatchAction("42", timeout, allow_watch_bookmarks=True)
        assert decision.delay == 0
        assert new.resource_version == "42"


def test_watch_timeouts_stay_in_300_600() -> None:
    state = listed()
    for i in range(100):
        decision, _ = step(state, ended(None), now=1.0, rand=i / 100)
        assert isinstance(decision.action, WatchAction)
        assert 300 <= decision.action.timeout_seconds < 600


def test_relist_at_specific_rv_is_unpaged_unless_server_paginated() -> None:
    state = listed("100")
    decision, _ = step(state, ended(ErrorKind.OTHER), now=1.0, rand=0.0)
    assert decision.action == ListAction("150", None)
    # The server paginated an RV=0 list (watch cache off): keep paging.
    state = ReflectorState.initial(LIST_ONLY)
    _, state = step(state, ListSucceeded("100", paginated=True, requested_resource_version="0"),
                    now=0.0, rand=0.0)  # fmt: skip
    assert state.paginated_result
    decision, _ = step(state, ended(ErrorKind.OTHER), now=1.0, rand=0.0)
    assert decision.action == ListAction("150", 500)


def test_list_expired_at_rv_retries_at_once_with_consistent_read() -> None:
    state = ReflectorState.initial(LIST_ONLY)
    decision, state = step(state, ListFailed(ErrorKind.EXPIRED, "0"), now=0.0, rand=0.0)
    assert decision.action == ListAction("", 500)
    assert decision.delay == 0
    assert state.resource_version_unavailable
    # Failing again at "" backs off, still with "".
    decision, state = step(state, ListFailed(ErrorKind.EXPIRED, ""), now=0.0, rand=0.0)
    assert decision.action == ListAction("", 500)
    assert decision.delay == pytest.approx(0.8)


def test_continue_token_expired_does_one_full_list() -> None:
    state = ReflectorState.initial(LIST_ONLY)
    decision, state = step(
        state, ListFailed(ErrorKind.EXPIRED, "", during_continue=True), now=0.0, rand=0.0
    )
    assert decision.action == ListAction("", None, continue_after_expired=True)
    assert decision.delay == 0


@pytest.mark.parametrize(
    "kind",
    [ErrorKind.OTHER, ErrorKind.TOO_MANY_REQUESTS, ErrorKind.CONNECTION_REFUSED],
)
def test_list_failure_backs_off_then_relists(kind: ErrorKind) -> None:
    state = ReflectorState.initial(LIST_ONLY)
    decision, state = step(state, ListFailed(kind, "0"), now=10.0, rand=0.0)
    assert decision.action == ListAction("0", 500)
    assert decision.delay == pytest.approx(0.8)
    assert state.last_backoff_at == 10.0


# ------------------------------------------------------------------ watch endings


def test_clean_end_rewatches_from_last_rv_without_relist() -> None:
    decision, state = step(listed(), ended(None, rv="150"), now=1.0, rand=0.0)
    assert decision.action == WatchAction("150", 300)
    assert decision.delay == 0
    assert state.resource_version == "150"


def test_connection_lost_mid_stream_rewatches_at_once() -> None:
    decision, _ = step(listed(), ended(ErrorKind.CONNECTION_LOST), now=1.0, rand=0.0)
    assert decision.action == WatchAction("150", 300)
    assert decision.delay == 0


def test_very_short_watch_without_events_backs_off_and_relists() -> None:
    outcome = ended(None, duration=0.2, events=0, rv="")
    decision, _ = step(listed("100"), outcome, now=1.0, rand=0.0)
    assert decision.action == ListAction("100", None)
    assert decision.delay == pytest.approx(0.8)
    # Short but with events is fine.
    decision, _ = step(listed("100"), ended(None, duration=0.2, events=1), now=1.0, rand=0.0)
    assert isinstance(decision.action, WatchAction)
    assert decision.delay == 0


def test_expired_watch_backs_off_and_relists_at_the_last_synced_rv() -> None:
    """A 410 during a WATCH relists at the last synced resourceVersion, not with a quorum read.

    client-go, tools/cache/reflector.go (``Reflector.watch`` and ``DefaultWatchErrorHandler``):
    on ``isExpiredError`` during a watch it deliberately does *not* call
    ``setIsLastSyncResourceVersionUnavailable``, because a LIST at a resourceVersion returns data
    "at least as fresh as" it and is served by the watch cache; ``relistResourceVersion`` then
    yields ``lastSyncResourceVersion``. Only a LIST that itself fails with 410 falls back to "".
    """
    decision, state = step(listed(), ended(ErrorKind.EXPIRED, rv="150"), now=1.0, rand=0.0)
    # Unpaged: a list at a specific resourceVersion is answered by the watch cache in one piece.
    assert decision.action == ListAction("150", None)
    assert decision.delay == pytest.approx(0.8)
    assert not state.resource_version_unavailable
    assert state.relist_resource_version() == "150"
    # Only when that list fails with 410 too does the reflector fall back to a consistent read.
    decision, state = step(state, ListFailed(ErrorKind.EXPIRED, "150"), now=2.0, rand=0.0)
    assert decision.action == ListAction("", 500)
    assert decision.delay == 0
    assert state.resource_version_unavailable
    # A successful list clears it.
    _, state = step(state, ListSucceeded("300", requested_resource_version=""), now=2, rand=0)
    assert not state.resource_version_unavailable
    assert state.relist_resource_version() == "300"


@pytest.mark.parametrize("kind", [ErrorKind.TOO_MANY_REQUESTS, ErrorKind.CONNECTION_REFUSED])
def test_throttled_or_refused_watch_backs_off_and_rewatches(kind: ErrorKind) -> None:
    decision, _ = step(listed(), ended(kind, rv="150"), now=1.0, rand=0.0)
    assert decision.action == WatchAction("150", 300)
    assert decision.delay == pytest.approx(0.8)


def test_other_watch_error_backs_off_and_relists() -> None:
    decision, _ = step(listed(), ended(ErrorKind.OTHER, rv="150"), now=1.0, rand=0.0)
    assert decision.action == ListAction("150", None)
    assert decision.delay == pytest.approx(0.8)


# ------------------------------------------------------------------ backoff


def test_backoff_doubles_to_the_cap_with_jitter_and_resets_after_two_minutes() -> None:
    state = listed()
    delays = []
    now = 0.0
    for _ in range(8):
        decision, state = step(state, ended(ErrorKind.CONNECTION_REFUSED), now=now, rand=0.0)
        delays.append(decision.delay)
        now += 1.0
    assert delays == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0])
    # Jitter stretches by up to +100 % (client-go's jitter 1.0).
    decision, state = step(state, ended(ErrorKind.CONNECTION_REFUSED), now=now, rand=0.5)
    assert decision.delay == pytest.approx(45.0)
    # Two minutes without a backoff: back to the start.
    decision, state = step(state, ended(ErrorKind.CONNECTION_REFUSED), now=now + 120, rand=0.0)
    assert decision.delay == pytest.approx(0.8)


def test_backoff_policy_defaults_match_client_go() -> None:
    policy = BackoffPolicy()
    assert (policy.initial, policy.cap, policy.factor, policy.reset_after) == (0.8, 30, 2, 120)
    assert policy.steps == 38  # ceil(30 / 0.8)


# ------------------------------------------------------------------ streaming list


def test_paged_list_first_by_default() -> None:
    """kubectrl departs from client-go 1.36 here: streaming lists are opt-in (the stream's
    per-object HTTP chunks cost several times the CPU of paged LISTs in Python)."""
    decision, _ = step(ReflectorState.initial(), Start(), now=0.0, rand=0.0)
    assert decision.action == ListAction("0", 500)


def test_streaming_list_first_when_enabled() -> None:
    decision, _ = step(ReflectorState.initial(STREAMING), Start(), now=0.0, rand=0.0)
    assert decision.action == WatchAction(
        "", 300, send_initial_events=True, resource_version_match="NotOlderThan"
    )


def test_streaming_list_failure_falls_back_to_list_at_once() -> None:
    state = ReflectorState.initial(STREAMING)
    outcome = WatchEnded(ErrorKind.CONNECTION_LOST, 0.1, 5, "", streaming=True,
                         initial_events_done=False)  # fmt: skip
    decision, new = step(state, outcome, now=0.0, rand=0.0)
    assert decision.action == ListAction("0", 500)
    assert decision.delay == 0
    assert new.streaming  # a transient failure: try streaming again next time


def test_streaming_list_rejected_disables_streaming() -> None:
    outcome = WatchEnded(ErrorKind.OTHER, 0.1, 0, "", streaming=True, initial_events_done=False)
    decision, new = step(ReflectorState.initial(STREAMING), outcome, now=0.0, rand=0.0)
    assert isinstance(decision.action, ListAction)
    assert not new.streaming
    decision, _ = step(new, ended(ErrorKind.OTHER), now=1.0, rand=0.0)
    assert isinstance(decision.action, ListAction)


def test_streaming_list_expired_falls_back_to_consistent_list() -> None:
    outcome = WatchEnded(ErrorKind.EXPIRED, 0.1, 0, "", streaming=True, initial_events_done=False)
    decision, _ = step(listed("5", STREAMING), outcome, now=0.0, rand=0.0)
    assert decision.action == ListAction("", 500)


def test_completed_streaming_list_then_ends_cleanly_rewatches() -> None:
    outcome = WatchEnded(None, 60.0, 10, "77", streaming=True, initial_events_done=True)
    decision, state = step(ReflectorState.initial(STREAMING), outcome, now=0.0, rand=0.0)
    assert decision.action == WatchAction("77", 300)
    assert state.resource_version == "77"


def test_relist_with_streaming_uses_last_rv_not_older_than() -> None:
    state = listed("100", STREAMING)
    decision, _ = step(state, ended(ErrorKind.OTHER, rv="150"), now=0.0, rand=0.0)
    assert decision.action == WatchAction(
        "150", 300, send_initial_events=True, resource_version_match="NotOlderThan"
    )
    # 410 during the watch: stream again from the last synced resourceVersion (client-go's
    # rewatchResourceVersion only returns "" after a streaming list itself got 410).
    decision, _ = step(state, ended(ErrorKind.EXPIRED, rv="150"), now=0.0, rand=0.0)
    assert decision.action == WatchAction(
        "150", 300, send_initial_events=True, resource_version_match="NotOlderThan"
    )


# ------------------------------------------------------------------ helpers


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ExpiredError("too old"), ErrorKind.EXPIRED),
        (GoneError("gone"), ErrorKind.EXPIRED),
        (ServerTimeoutError("Too large resource version: 10, current: 5"), ErrorKind.EXPIRED),
        (ServerTimeoutError("slow"), ErrorKind.OTHER),
        (TooManyRequestsError("slow down"), ErrorKind.TOO_MANY_REQUESTS),
        (APIConnectionError("refused", connect_failed=True), ErrorKind.CONNECTION_REFUSED),
        (RequestTimeoutError("connect timeout"), ErrorKind.CONNECTION_REFUSED),
        (APIConnectionError("reset"), ErrorKind.CONNECTION_LOST),
        (WatchStalledError("silent"), ErrorKind.CONNECTION_LOST),
        (ConnectionRefusedError(), ErrorKind.CONNECTION_REFUSED),
        (ForbiddenError("no"), ErrorKind.OTHER),
        (InternalError("boom"), ErrorKind.OTHER),
        (MalformedStreamError("garbage"), ErrorKind.OTHER),
        (ValueError("bug"), ErrorKind.OTHER),
    ],
)
def test_classify_error(error: BaseException, kind: ErrorKind) -> None:
    assert classify_error(error) is kind


def test_step_is_pure() -> None:
    state = listed()
    outcome = ended(ErrorKind.CONNECTION_REFUSED)
    assert step(state, outcome, now=3.0, rand=0.25) == step(state, outcome, now=3.0, rand=0.25)
