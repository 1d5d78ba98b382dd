"""Kept for what imports from here: the credential sources are the inputs of the request
pipeline's auth step, :mod:`kubectrl.client._pipeline` (where every step of a request is)."""

from __future__ import annotations

from kubectrl.client._pipeline import (
    BasicAuthCredentials,
    CredentialSource,
    KubeAuth,
    LoaderCredentials,
    StaticTokenCredentials,
    TokenFileCredentials,
)

__all__ = [
    "BasicAuthCredentials",
    "CredentialSource",
    "KubeAuth",
    "LoaderCredentials",
    "StaticTokenCredentials",
    "TokenFileCredentials",
]
