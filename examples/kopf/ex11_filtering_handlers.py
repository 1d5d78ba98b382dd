"""kopf's 11-filtering-handlers: handlers filtered by labels, annotations, a callable and field
values. ``True``/``False`` are kopf's ``PRESENT``/``ABSENT``; a callable filter value gets only
the value here, so kopf's callbacks that read the spec, and kopf's ``field=``/``value=`` and
``old=``/``new=``, are ``when`` callables. kopf's daemon with a field filter waits for the
daemons (``operator.daemon``)."""

from kubectrl.operator import Operator

operator = Operator()
KEX = ("kopf.dev/v1", "KopfExample")


def say_yes(labels, spec, **_):  # kopf: labels={"somelabel": say_yes}
    return labels.get("somelabel") == "somevalue" and spec.get("field") is not None


def say_no(annotations, spec, **_):  # kopf: annotations={"someannotation": say_no}
    value = annotations.get("someannotation")
    return value == "somevalue" and spec.get("field") == "not-this-value-for-sure"


@operator.on_create(KEX, labels={"somelabel": "somevalue"})
def create_with_labels_matching(logger, **_):
    logger.info("Label is matching.")


@operator.on_create(KEX, labels={"somelabel": True})
def create_with_labels_present(logger, **_):
    logger.info("Label is present.")


@operator.on_create(KEX, labels={"nonexistent": False})
def create_with_labels_absent(logger, **_):
    logger.info("Label is absent.")


@operator.on_create(KEX, when=say_yes)
def create_with_labels_callback_matching(logger, **_):
    logger.info("Label callback matching.")


@operator.on_create(KEX, annotations={"someannotation": "somevalue"})
def create_with_annotations_matching(logger, **_):
    logger.info("Annotation is matching.")


@operator.on_create(KEX, annotations={"someannotation": True})
def create_with_annotations_present(logger, **_):
    logger.info("Annotation is present.")


@operator.on_create(KEX, annotations={"nonexistent": False})
def create_with_annotations_absent(logger, **_):
    logger.info("Annotation is absent.")


@operator.on_create(KEX, when=say_no)
def create_with_annotations_callback_matching(logger, **_):
    logger.info("Annotation callback mismatch.")


@operator.on_create(KEX, when=lambda body, **_: True)
def create_with_filter_satisfied(logger, **_):
    logger.info("Filter satisfied.")


@operator.on_create(KEX, when=lambda body, **_: False)
def create_with_filter_not_satisfied(logger, **_):
    logger.info("Filter not satisfied.")


@operator.on_create(KEX, when=lambda spec, **_: spec.get("field") == "value")
def create_with_field_value_satisfied(logger, **_):
    logger.info("Field value is satisfied.")


@operator.on_create(KEX, when=lambda spec, **_: spec.get("field") == "something-else")
def create_with_field_value_not_satisfied(logger, **_):
    logger.info("Field value is not satisfied.")


@operator.on_create(KEX, when=lambda spec, **_: "field" in spec)
def create_with_field_presence_satisfied(logger, **_):
    logger.info("Field presence is satisfied.")


@operator.on_create(KEX, when=lambda spec, **_: "inexistent" in spec)
def create_with_field_presence_not_satisfied(logger, **_):
    logger.info("Field presence is not satisfied.")


@operator.on_field(
    KEX, field="spec.field", when=lambda old, new, **_: (old, new) == ("value", "changed")
)
def update_with_field_change_satisfied(logger, **_):
    logger.info("Field change is satisfied.")
