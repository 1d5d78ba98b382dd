"""kopf's 01-minimal: a create handler whose return value becomes the status."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn(spec, logger, **_):
    logger.info(f"And here we are! Creating: {spec}")
    return {"message": "hello world"}  # stored as status.create_fn
