"""kopf's 08-events: raw watch events; a failing event handler does not stop the others."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_event(("kopf.dev/v1", "KopfExample"))
def event_fn_with_error(**_):
    raise Exception("Oops!")


@operator.on_event(("kopf.dev/v1", "KopfExample"))
def normal_event_fn(event, logger, **_):
    logger.info(f"Event received: {event!r}")
