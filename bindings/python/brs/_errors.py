"""Turn libbrs status codes into Python exceptions that say what to change."""

from . import _native as n


class BrsError(RuntimeError):
    """A libbrs failure that is not an argument error; ``status`` is the C status code."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


# Argument problems are ValueErrors (the caller must change a value); exhaustion is MemoryError;
# anything else (a wrong state, an unsupported key) is a bug on our side or a library mismatch.
_VALUE_ERRORS = frozenset({
    n.ERR_INVALID_ARGUMENT, n.ERR_OUT_OF_RANGE, n.ERR_INVALID_LENGTH, n.ERR_TOO_FEW_SAMPLES,
    n.ERR_SAMPLE_TOO_LONG, n.ERR_CAP_INFEASIBLE, n.ERR_TOO_LARGE,
})


def strerror(status):
    return n.lib.brs_strerror(status).decode("utf-8", "replace")


def error_for(status, detail=""):
    """The exception for a failed call; ``detail`` is the handle's last_error message."""
    message = strerror(status)
    if detail:
        message = f"{detail} ({message})"
    if status in _VALUE_ERRORS:
        exc = ValueError(message)
    elif status == n.ERR_NO_MEMORY:
        exc = MemoryError(message)
    else:
        return BrsError(message, status)
    exc.status = status
    return exc


def check_sampler(status, handle):
    if status != n.OK:
        raise error_for(status, _detail(n.lib.brs_sampler_last_error(handle)))


def check_plan(status, handle):
    if status != n.OK:
        raise error_for(status, _detail(n.lib.brs_plan_last_error(handle)))


def check(status):
    """For handle-less calls (option bounds)."""
    if status != n.OK:
        raise error_for(status)


def _detail(raw):
    return raw.decode("utf-8", "replace") if raw else ""
