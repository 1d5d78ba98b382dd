"""format_time writes every datetime as strftime's RFC 3339 form (its fast path included)."""

from __future__ import annotations

import datetime

from hypothesis import given
from hypothesis import strategies as st

from kubectrl.events._correlator import format_time


@given(st.datetimes(timezones=st.just(datetime.timezone.utc)) | st.datetimes())
def test_format_time_matches_strftime(value: datetime.datetime) -> None:
    assert format_time(value) == value.strftime("%Y-%m-%dT%H:%M:%SZ")
