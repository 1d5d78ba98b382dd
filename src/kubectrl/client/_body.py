"""Kept for what imports from here: answers are read whole under the client's limits by the
transports (:mod:`kubectrl.client._fast_transport`, :mod:`kubectrl.client._transport`), and
their JSON decoded by the request pipeline (:mod:`kubectrl.client._pipeline`)."""

from __future__ import annotations

from kubectrl.client._fast_transport import (
    Answer,
    BodyTooLargeError,
    ResponseRefusedError,
    decode_body,
    too_large,
)
from kubectrl.client._pipeline import json_body
from kubectrl.client._transport import read_content

__all__ = [
    "Answer",
    "BodyTooLargeError",
    "ResponseRefusedError",
    "decode_body",
    "json_body",
    "read_content",
    "too_large",
]
