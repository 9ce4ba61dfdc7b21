"""Paths in the configuration are read relative to the configuration file.

A relative path (``reports_dir: reports``) or a relative SQLite or DuckDB file in a database
URL (``sqlite:///riskmon.db``) means the same file whatever folder riskmon was started from —
cron starts jobs in ``$HOME``. The folder comes in the validation context (key
:data:`CONFIG_DIR`) when a file is loaded; a configuration built in Python without one keeps
its paths as given, relative to the working directory as Python reads them.

The same context says whether a model's source may still hold ``${VAR}`` references whose
variable is unset (key :data:`UNSET_SOURCES`): commands that only read the metric store load
the configuration that way, and never open a source.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationInfo

#: validation-context key: the folder of the configuration file
CONFIG_DIR = "config_dir"
#: validation-context key: sources may hold references to unset environment variables
UNSET_SOURCES = "unset_sources"

#: database URL backends whose "database" is a file path
_FILE_BACKENDS = frozenset({"sqlite", "duckdb"})
#: a database that is no file: in memory, or an SQLite URI / a service name such as "md:"
_NOT_A_FILE = re.compile(r"^(?::memory:|[A-Za-z][A-Za-z0-9+.\-]*:)")


def _config_dir(info: ValidationInfo) -> Path | None:
    context = info.context if isinstance(info.context, dict) else {}
    folder = context.get(CONFIG_DIR)
    return Path(folder) if folder is not None else None


def unset_allowed(info: ValidationInfo) -> bool:
    """Whether this validation accepts sources with unset ``${VAR}`` references."""
    return isinstance(info.context, dict) and bool(info.context.get(UNSET_SOURCES))


def file_of_url(url: str) -> Path | None:
    """The file an SQLite or DuckDB URL names (None for other databases and in-memory ones).

    >>> file_of_url("sqlite:///data/riskmon.db")
    PosixPath('data/riskmon.db')
    >>> file_of_url("sqlite://") is None, file_of_url("postgresql://db/x") is None
    (True, True)
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return None
    database = parsed.database
    if parsed.get_backend_name() not in _FILE_BACKENDS or not database:
        return None
    if _NOT_A_FILE.match(database):
        return None
    return Path(database)


def url_relative_to_config(value: str, info: ValidationInfo) -> str:
    """A SQLite/DuckDB URL whose file is relative, made absolute against the config's folder."""
    folder = _config_dir(info)
    path = file_of_url(value)
    if folder is None or path is None:
        return value
    expanded = path.expanduser()
    if expanded.is_absolute() and expanded == path:
        return value
    from sqlalchemy.engine import make_url

    absolute = expanded if expanded.is_absolute() else folder / expanded
    return make_url(value).set(database=str(absolute)).render_as_string(hide_password=False)


def path_relative_to_config(value: Path, info: ValidationInfo) -> Path:
    """A relative folder or file, made absolute against the configuration file's folder."""
    expanded = Path(value).expanduser()
    folder = _config_dir(info)
    if expanded.is_absolute() or folder is None:
        return expanded
    return folder / expanded
