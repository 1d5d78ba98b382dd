"""The options every write takes: ``dry_run`` (``dryRun=All``) and ``field_validation``.

``field_validation`` is the API's ``fieldValidation`` query parameter: ``"Strict"`` refuses an
object with fields its kind does not declare (a create or update answers 400 ``strict decoding
error: unknown field "spec.x"``, a patch 422), ``"Warn"`` drops them with a ``Warning`` header
each (the server's default when the parameter is absent), ``"Ignore"`` drops them silently.
``dry_run`` asks the server to validate, default and admit the write without storing it (no
watch event); the answer is what would have been stored.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["FIELD_VALIDATIONS", "FieldValidation", "write_params"]

#: ``fieldValidation`` values: ``"Strict"``, ``"Warn"`` or ``"Ignore"`` (``None``: the server's
#: default, ``Warn``).
FieldValidation = Literal["Strict", "Warn", "Ignore"]

FIELD_VALIDATIONS: tuple[str, ...] = ("Strict", "Warn", "Ignore")


def write_params(dry_run: bool, field_validation: str | None) -> dict[str, Any]:
    """The query parameters of a write's options; ``ValueError`` names a bad
    ``field_validation`` before anything is sent.

    Example::

        >>> write_params(True, "Strict")
        {'dryRun': 'All', 'fieldValidation': 'Strict'}
    """
    if field_validation is not None and field_validation not in FIELD_VALIDATIONS:
        raise ValueError(
            f"field_validation must be one of {', '.join(FIELD_VALIDATIONS)} or None, "
            f"not {field_validation!r}"
        )
    return {"dryRun": "All" if dry_run else None, "fieldValidation": field_validation}
