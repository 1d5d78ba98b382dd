"""kopf's 14-daemons: a sync daemon that fails three times, then pings for 30 s; an async one
that fails three times, then pings until it is cancelled on deletion."""

from kubectrl.operator import Operator, TemporaryError

operator = Operator()


# A `def` daemon runs in a thread of its own: it ends by itself once `stopped` is set.
@operator.daemon(("kopf.dev/v1", "KopfExample"), backoff=3)
def background_sync(stopped, spec, logger, retry, patch, **_):
    if retry < 3:
        patch.setdefault("status", {})["message"] = f"Failed {retry + 1} times."
        raise TemporaryError("Simulated failure.", delay=1)

    started = operator.clock.now()
    while not stopped and operator.clock.now() - started <= 30:
        logger.info(f"=> Ping from a sync daemon: field={spec['field']!r}, retry={retry}")
        stopped.wait(5.0)

    patch.setdefault("status", {})["message"] = "Accompanying is finished."


# An `async def` daemon is cancelled when it does not stop in time.
@operator.daemon(
    ("kopf.dev/v1", "KopfExample"),
    backoff=3,
    cancellation_backoff=1.0,
    cancellation_timeout=0.5,
    annotations={"someannotation": "somevalue"},
)
async def background_async(spec, logger, retry, **_):
    if retry < 3:
        raise TemporaryError("Simulated failure.", delay=1)

    while True:
        logger.info(f"=> Ping from an async daemon: field={spec['field']!r}")
        await operator.clock.sleep(5.0)
