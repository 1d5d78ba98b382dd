"""String formats of a CRD schema checked as kube-openapi's strfmt does.

Upstream: kube-openapi pkg/validation/strfmt/default.go (IsEmail through net/mail.ParseAddress,
IsURI through url.ParseRequestURI, IsDateTime, the base64 pattern of "byte", IsIPv4/IsIPv6 and
"cidr" through k8s.io/utils/net ParseIPSloppy/ParseCIDRSloppy) and strfmt/duration.go
(ParseDuration: Go's time.ParseDuration, else any "<digits><unit>" in the text). Each expectation
is what kube-apiserver v1.36 answered.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target
from schema_helpers import thing, thing_kind

from kubectrl.errors import InvalidError

FORMATS = ["email", "uri", "duration", "date-time", "byte", "ipv4", "ipv6", "cidr"]
CASES = [
    ("email", "a@b.c", True),
    ("email", "Name <a@b.c>", True),
    ("email", "a@[1.2.3.4]", True),
    ("email", '"q"@b.c', True),
    ("email", "a..b@c.d", False),
    ("email", "a@b", True),
    ("uri", "http://x/%zz", False),
    ("uri", "fe80::1%eth0", True),
    ("uri", "rel/path", False),
    ("uri", "/path", True),
    ("duration", "P1D", True),
    ("duration", "0", True),
    ("duration", "5S", True),
    ("duration", "1.5 hours", True),
    ("duration", "550e8400-e29b-41d4-a716-446655440000", True),
    ("duration", "1y", False),
    ("duration", "5", False),
    ("date-time", "2020-01-01T00:00:00+0100", False),
    ("date-time", "2020-01-01t00:00:00z", True),
    ("date-time", "2020-01-01T00:00:00.1234567891Z", True),
    ("byte", "", False),
    ("byte", "YQ", False),
    ("byte", "aGVsbG8=", True),
    ("ipv4", "01.2.3.4", True),
    ("ipv4", "::ffff:1.2.3.4", True),
    ("ipv4", "1.2.3.256", False),
    ("ipv6", "fe80::1%eth0", False),
    ("ipv6", "::1", True),
    ("cidr", "010.0.0.0/8", True),
    ("cidr", "1.2.3.4/33", False),
    ("cidr", "::ffff:1.2.3.4/120", True),
    # a trailing newline: Go's regexp "$" is the end of the text, where Python's also matches
    # before a final newline (duration is found anywhere in the text, so it still passes)
    ("byte", "aGVsbG8=\n", False),
    ("email", "a@b.c\n", False),
    ("date-time", "2020-01-01T00:00:00Z\n", False),
    ("duration", "5s\n", True),
]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f.replace("-", ""): {"type": "string", "format": f} for f in FORMATS},
}


@pytest.mark.parametrize(("fmt", "value", "valid"), CASES)
async def test_a_format_is_checked_as_strfmt_does(
    target: Target, fmt: str, value: str, valid: bool
) -> None:
    kind = await thing_kind(target, SCHEMA)
    field = fmt.replace("-", "")
    obj = thing(kind, target.namespace, {field: value})
    if valid:
        created = await target.client.create(obj, dry_run=True)
        assert created["spec"][field] == value
        return
    with pytest.raises(InvalidError) as caught:
        await target.client.create(obj, dry_run=True)
    assert [cause.field for cause in caught.value.causes] == [f"spec.{field}"]
