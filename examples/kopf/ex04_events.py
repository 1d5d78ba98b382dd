"""kopf's 04-events: post Kubernetes Events about the handled object."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn(body, **_):
    # The all-purpose function for the event creation.
    operator.event(body, type="Normal", reason="SomeReason", message="Some message")
    # The shortcuts for the conventional events and common cases.
    operator.info(body, reason="SomeReason", message="Some message")
    operator.warn(body, reason="SomeReason", message="Some message")
    try:
        raise RuntimeError("Exception text.")
    except Exception:
        operator.exception(body, reason="SomeReason", message="Some exception:")
