"""kopf's 09-testing: an operator tested while it runs (kopf's KopfRunner; here FakeAPI and
``run_manager``, see tests/unit/examples/test_kopf_ports.py)."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn(logger, **_):
    logger.info("Something was logged here.")
