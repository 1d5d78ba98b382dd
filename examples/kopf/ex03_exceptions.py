"""kopf's 03-exceptions: permanent and temporary errors, retries, backoff."""

from kubectrl.operator import Operator, PermanentError, TemporaryError

operator = Operator()
KEX = ("kopf.dev/v1", "KopfExample")


class MyError(Exception):
    pass


@operator.on_create(KEX)
def instant_failure_with_only_a_message(**_):
    raise PermanentError("Fail once and for all.")


@operator.on_create(KEX)
def eventual_success_with_a_few_messages(retry, **_):
    if retry < 3:  # 0, 1, 2, 3
        raise TemporaryError("Expected recoverable error.", delay=1.0)


@operator.on_create(KEX, retries=3, backoff=1.0)
def eventual_failure_with_tracebacks(**_):
    raise MyError("An error that is supposed to be recoverable.")


@operator.on_create(KEX, retries=1, backoff=1.0)  # kopf's errors=ErrorsMode.PERMANENT
def instant_failure_with_traceback(**_):
    raise MyError("An error that is supposed to be recoverable.")
