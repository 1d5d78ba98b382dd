"""kopf's 07-subhandlers: one sub-handler per item of the spec, each run to success once."""

from kubectrl.operator import Operator, register

operator = Operator()


@operator.on_create(("kopf.dev/v1", "KopfExample"))
def create_fn(spec, **_):
    for item in spec.get("items", []):

        async def create_item_fn(logger, item=item, **_):
            logger.info(f"=== Handling creation for {item}. ===")

        register(create_item_fn, id=item)
