"""Quantities written back in the apiserver's canonical form (``resource.Quantity``).

Upstream: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (``ParseQuantity``, its
fast path keeping a canonical-looking string, ``CanonicalizeBytes``), amount.go
(``AsCanonicalBytes``, ``AsCanonicalBase1024Bytes``) and pkg/apis/core/v1/defaults.go
(``SetDefaults_ResourceList`` rounds every ResourceList value up to ``1m``). Each expected value
below is what kube-apiserver v1.36 answered for a ResourceQuota's ``spec.hard.cpu``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubectrl.apiserver._schema.quantity import canonical_quantity, parse_quantity
from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

ASKED = {
    "1000m": "1",
    "0.5": "500m",
    "1Gi": "1Gi",
    "1000Mi": "1000Mi",
    "1024Mi": "1Gi",
    "1.5Gi": "1536Mi",
    "0.5Ki": "512",
    "1023Ki": "1023Ki",
    "1025": "1025",
    "100e-3": "100e-3",
    "1e3": "1e3",
    "1000e0": "1e3",
    "1.5e3": "1500",
    "12e2": "1200",
    "0Gi": "0",
    "0.0": "0",
    "1000k": "1M",
    "1000000": "1M",
    "1E": "1E",
    "1000E": "1",
    "1e21": "1e21",
    "8Ei": "9223372036854775807",
    "+1": "+1",
    "1.": "1.",
    "3e0": "3e0",
    "10e-1": "1",
    "2000000m": "2k",
    "1.0Gi": "1Gi",
    "2048Ki": "2Mi",
    "0.5M": "500k",
    "1.25k": "1250",
    "01Ki": "01Ki",
    "007": "007",
    "1.G": "1.G",
    # ResourceList values: rounded up to the milli
    "1n": "1m",
    "0.1n": "1m",
    "1500u": "2m",
    "0.000001": "1m",
    "1e-9": "1e-3",
    "5e-7": "1e-3",
    "1.1Ki": "1126400m",
}


@pytest.mark.parametrize(("given", "stored"), sorted(ASKED.items()))
def test_resource_list_quantities_as_the_apiserver_writes_them(given: str, stored: str) -> None:
    assert canonical_quantity(given, milli=True) == stored


def test_outside_a_resource_list_nothing_is_rounded_to_the_milli() -> None:
    assert canonical_quantity("1500u") == "1500u"
    assert canonical_quantity("0.1n") == "1n"
    assert canonical_quantity("1.5n") == "2n"


def test_not_quantities() -> None:
    assert canonical_quantity("1.2.3") is None
    assert canonical_quantity("1Ki2") is None
    assert parse_quantity(3) is None
    assert parse_quantity("1500m") == Fraction(3, 2)


async def test_the_fake_stores_requests_canonically() -> None:
    api = FakeAPI()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "resources": {"requests": {"cpu": "1000m", "memory": "1024Mi"}},
                }
            ]
        },
    }
    async with AsyncClient(api.config()) as client:
        created = await client.create(pod)
    requests = created["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "1", "memory": "1Gi"}
