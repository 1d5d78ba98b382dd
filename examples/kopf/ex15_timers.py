"""kopf's 15-timers: a sync and an async timer, each only once the object has been idle."""

from kubectrl.operator import Operator

operator = Operator()


@operator.timer(("kopf.dev/v1", "KopfExample"), idle=5, interval=2)
def every_few_seconds_sync(spec, logger, **_):
    logger.info(f"Ping from a sync timer: field={spec['field']!r}")


@operator.timer(("kopf.dev/v1", "KopfExample"), idle=10, interval=4)
async def every_few_seconds_async(spec, logger, **_):
    logger.info(f"Ping from an async timer: field={spec['field']!r}")
