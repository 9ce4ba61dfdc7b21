"""Exceptions and warnings raised by riskmon.

Domain errors derive from :class:`RiskmonError`; the CLI turns them into one line and an exit
code. Errors about malformed input data also derive from :class:`ValueError`, so that code
written against numpy/scikit-learn conventions catches them as usual.
"""

from __future__ import annotations


class RiskmonError(Exception):
    """Base class of every error riskmon raises on purpose."""

    #: process exit code the CLI uses for this error
    exit_code = 1


class InvalidDataError(RiskmonError, ValueError):
    """Input data is malformed: labels other than 0/1, NaN scores, negative weights, ..."""


class ConfigError(RiskmonError):
    """The configuration file is missing, unreadable or invalid.

    ``str(error)`` is one line naming the file, the key path and what was expected.
    """

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None):
        self.path = path
        self.key = key
        self.detail = message
        where = ": ".join(part for part in (path, key) if part)
        super().__init__(f"{where}: {message}" if where else message)


class StoreError(RiskmonError):
    """The metric store cannot be reached, is not migrated, or refused a write."""


class SourceError(RiskmonError):
    """A model's loan source cannot be read: unreachable, missing table or column, bad values."""


class RiskmonWarning(UserWarning):
    """Base class of riskmon's warnings."""


class DegenerateDataWarning(RiskmonWarning):
    """Data is legal but a figure is not defined on it (no bads, a single score value, ...).

    The figure is returned as NaN and the warning says why.
    """
