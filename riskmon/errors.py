"""Exceptions and warnings raised by riskmon.

Domain errors derive from :class:`RiskmonError`; the CLI turns them into one line and an exit
code. Errors about malformed input data also derive from :class:`ValueError`, so that code
written against numpy/scikit-learn conventions catches them as usual.

Every exit code of the ``riskmon`` command means one thing, so that a scheduler can tell a red
model from an outage:
"""

from __future__ import annotations

#: everything asked for was done; no alert at ``--fail-on`` severity
EXIT_OK = 0
#: a run raised an alert at least as severe as ``--fail-on`` (and nothing failed)
EXIT_ALERT = 1
#: the command cannot be done as given: a usage or configuration error, an unknown model, a
#: date without a run, a model without a baseline
EXIT_USAGE = 2
#: the work failed: a run failed (its error is stored) or is in progress in another process,
#: a baseline could not be frozen from the loans, an unexpected error
EXIT_FAILED = 3
#: the metric store or a source could not be used at start: unreachable, refused the login,
#: a missing driver, a store not migrated; nothing was attempted
EXIT_UNAVAILABLE = 4


class RiskmonError(Exception):
    """Base class of every error riskmon raises on purpose."""

    #: process exit code the CLI uses for this error
    exit_code = EXIT_FAILED


class InvalidDataError(RiskmonError, ValueError):
    """Input data is malformed: labels other than 0/1, NaN scores, negative weights, ..."""


class ConfigError(RiskmonError):
    """The configuration file is missing, unreadable or invalid.

    ``str(error)`` is one line naming the file, the key path and what was expected.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None):
        self.path = path
        self.key = key
        self.detail = message
        where = ": ".join(part for part in (path, key) if part)
        super().__init__(f"{where}: {message}" if where else message)


class StoreError(RiskmonError):
    """The metric store cannot be reached, is not migrated, or refused a write."""

    exit_code = EXIT_UNAVAILABLE


class SourceError(RiskmonError):
    """A model's loan source cannot be read: unreachable, missing table or column, bad values."""


class SourceUnavailableError(SourceError):
    """A model's loan source cannot be connected to (down, login refused, driver missing)."""

    exit_code = EXIT_UNAVAILABLE


class RiskmonWarning(UserWarning):
    """Base class of riskmon's warnings."""


class DegenerateDataWarning(RiskmonWarning):
    """Data is legal but a figure is not defined on it (no bads, a single score value, ...).

    The figure is returned as NaN and the warning says why.
    """


def _looked_up(key: object) -> str:
    """A missing key in words: ``'performance', 'score'`` rather than a tuple."""
    parts = key if isinstance(key, tuple) else (key,)
    return ", ".join(repr(part) for part in parts) or "an empty key"


def describe_failure(error: BaseException) -> str:
    """One readable line saying why a run failed, as it is stored and shown in its report.

    A riskmon error says it itself. Any other exception is a defect of riskmon's: its class
    name and its message in words, never Python's bare ``KeyError: ('performance', '')``.
    The caller masks secrets (:func:`riskmon.redact.redact`).

    >>> describe_failure(KeyError(("performance", "gains")))
    "unexpected KeyError: riskmon looked up 'performance', 'gains' and found nothing"
    >>> describe_failure(ZeroDivisionError("division by zero"))
    'unexpected ZeroDivisionError: division by zero'
    """
    if isinstance(error, RiskmonError):
        return str(error)
    name = type(error).__name__
    if isinstance(error, KeyError) and len(error.args) == 1:
        return f"unexpected {name}: riskmon looked up {_looked_up(error.args[0])} and found nothing"
    message = str(error).strip()
    return f"unexpected {name}: {message}" if message else f"unexpected {name}, without a message"
