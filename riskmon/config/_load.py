"""Reading the configuration: YAML, ${VAR} interpolation, errors naming the key path, and
the fingerprint of a model's configuration."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    ValidationError,
)

from riskmon.config._deployment import RiskmonConfig
from riskmon.config._models import CONFIG_ENV_VAR, DEFAULT_CONFIG_PATH
from riskmon.config._paths import CONFIG_DIR, UNSET_SOURCES
from riskmon.config._source import _ENV_REFERENCE
from riskmon.config._yaml import UnsafeYAMLError, read_yaml
from riskmon.errors import ConfigError


def key_path(location: tuple[int | str, ...]) -> str:
    """``('models', 1, 'source', 'url')`` as ``models[1].source.url``."""
    out = ""
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _interpolate(
    node: Any,
    location: tuple[int | str, ...],
    env: Mapping[str, str],
    unset: dict[int, set[str]] | None = None,
) -> Any:
    """``node`` with every ``${VAR}`` replaced. With ``unset`` given, a reference under
    ``models[i].source`` to an unset variable stays as it is and is recorded in ``unset[i]``."""
    if isinstance(node, dict):
        return {k: _interpolate(v, (*location, str(k)), env, unset) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, (*location, i), env, unset) for i, v in enumerate(node)]
    if not isinstance(node, str):
        return node

    def substitute(match: re.Match[str]) -> str:
        name, default = match["name"], match["default"]
        if name in env:
            return env[name]
        if default is not None:
            return default
        if unset is not None and _in_source(location):
            unset.setdefault(int(location[1]), set()).add(name)
            return match[0]
        raise ConfigError(
            f"environment variable {name} is not set (referenced as ${{{name}}})",
            key=key_path(location),
        )

    return _ENV_REFERENCE.sub(substitute, node)


def _in_source(location: tuple[int | str, ...]) -> bool:
    return len(location) > 3 and location[0] == "models" and location[2] == "source"


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    message = str(error["msg"])
    return message.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def resolve_config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """The config file: ``--config``, else ``$RISKMON_CONFIG``, else ``./riskmon.yaml``."""
    if explicit is not None:
        return Path(explicit)
    from_env = os.environ.get(CONFIG_ENV_VAR)
    return Path(from_env) if from_env else DEFAULT_CONFIG_PATH


def parse_config(
    data: Any,
    *,
    source: str,
    env: Mapping[str, str] | None = None,
    config_dir: str | os.PathLike[str] | None = None,
    need_sources: bool = True,
) -> RiskmonConfig:
    """Validate already-parsed YAML data; ``source`` names it in errors.

    Relative paths (``reports_dir``, SQLite and DuckDB files in URLs) are taken relative to
    ``config_dir``, the configuration file's folder (as given when None). With
    ``need_sources`` false, a model's source may refer to unset environment variables: they
    are listed in its ``source.unset_variables``, and opening that source fails naming them.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping at the top level, got {type(data).__name__}", path=source
        )
    unset: dict[int, set[str]] | None = None if need_sources else {}
    context: dict[str, Any] = {UNSET_SOURCES: not need_sources}
    if config_dir is not None:
        context[CONFIG_DIR] = Path(config_dir)
    try:
        data = _interpolate(data, (), os.environ if env is None else env, unset)
        config = RiskmonConfig.model_validate(data, context=context)
    except ConfigError as exc:
        raise ConfigError(exc.detail, path=source, key=exc.key) from None
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        lines = [f"{source}: {key_path(e['loc']) or '(top level)'}: {_describe(e)}" for e in errors]
        first = errors[0]
        error = ConfigError(_describe(first), path=source, key=key_path(first["loc"]))
        error.args = ("\n".join(lines),)
        raise error from None
    for index, names in (unset or {}).items():
        # set after validation: the names are not configuration a file could give
        config.models[index].source._unset_variables = tuple(sorted(names))
    return config


def load_config(
    path: str | os.PathLike[str] | None = None, *, need_sources: bool = True
) -> RiskmonConfig:
    """Read, interpolate and validate the configuration file (see :func:`resolve_config_path`).

    The file is read with :class:`~riskmon.config._yaml.ConfigLoader`: at most
    :data:`~riskmon.config._yaml.MAX_CONFIG_BYTES`, no key twice in a mapping, aliases within
    bounds; each refusal is a :class:`ConfigError` naming the file and the cause.

    Relative paths in it are relative to the file's folder. ``need_sources=False`` is for
    work that never opens a model's source (see :func:`parse_config`).
    """
    resolved = resolve_config_path(path)
    try:
        data = read_yaml(resolved)
    except FileNotFoundError:
        hint = "" if path is not None else " (give --config PATH or set RISKMON_CONFIG)"
        raise ConfigError(f"configuration file not found{hint}", path=str(resolved)) from None
    except OSError as exc:
        raise ConfigError(
            f"cannot read the configuration file: {exc.strerror}", path=str(resolved)
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"expected UTF-8 text, got byte 0x{exc.object[exc.start]:02x} at offset {exc.start}",
            path=str(resolved),
        ) from None
    except UnsafeYAMLError as exc:
        raise ConfigError(
            exc.message, path=str(resolved), key=key_path(exc.location) or None
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"invalid YAML{where}: {problem}", path=str(resolved)) from None
    if data is None:  # nothing but blanks and comments: a file emptied by mistake, or the wrong one
        raise ConfigError(
            "the file is empty: expected a mapping with at least `models` "
            "(config/riskmon.example.yaml documents every key)",
            path=str(resolved),
        )
    return parse_config(
        data,
        source=str(resolved),
        config_dir=resolved.absolute().parent,
        need_sources=need_sources,
    )
