"""kopf's 05-handlers: several handlers per cause (resume, create, update, delete, field)."""

from kubectrl.operator import Operator

operator = Operator()


@operator.on_resume(("kopf.dev/v1", "KopfExample"))
def resume_fn_1(logger, **_):
    logger.info("RESUMED 1st")


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn_1(logger, **_):
    logger.info("CREATED 1st")


@operator.on_resume(("kopf.dev/v1", "KopfExample"))
def resume_fn_2(logger, **_):
    logger.info("RESUMED 2nd")


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn_2(logger, **_):
    logger.info("CREATED 2nd")


@operator.on_update(("kopf.dev/v1", "KopfExample"))
def update_fn(old, new, diff, logger, **_):
    logger.info("UPDATED")


@operator.on_delete(("kopf.dev/v1", "KopfExample"))
def delete_fn_1(logger, **_):
    logger.info("DELETED 1st")


@operator.on_delete(("kopf.dev/v1", "KopfExample"))
def delete_fn_2(logger, **_):
    logger.info("DELETED 2nd")


@operator.on_field(("kopf.dev/v1", "KopfExample"), field="spec.field")
def field_fn(old, new, logger, **_):
    logger.info(f"FIELD CHANGED: {old} -> {new}")
