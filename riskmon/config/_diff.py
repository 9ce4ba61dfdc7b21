"""What changed between two stored configurations of a model, key path by key path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: how a key absent from one of the two configurations reads
ABSENT = "(absent)"


@dataclass(frozen=True)
class ConfigChange:
    """One key whose value changed: its path (``thresholds.psi.red``), old and new values as
    they read (JSON; :data:`ABSENT` when the key was not there)."""

    path: str
    old: str
    new: str


def _shown(value: Any) -> str:
    return ABSENT if value is _MISSING else json.dumps(value, sort_keys=True)


_MISSING = object()


def config_changes(old: Any, new: Any, path: str = "") -> list[ConfigChange]:
    """Every leaf that differs between ``old`` and ``new`` (dumped configurations), by key path;
    a list is compared as a whole value.

    >>> config_changes({"psi": {"red": 0.25}}, {"psi": {"red": 0.2}})
    [ConfigChange(path='psi.red', old='0.25', new='0.2')]
    """
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[ConfigChange] = []
        for key in sorted({*old, *new}, key=str):
            where = f"{path}.{key}" if path else str(key)
            changes += config_changes(old.get(key, _MISSING), new.get(key, _MISSING), where)
        return changes
    if isinstance(old, dict) and new is _MISSING:
        return config_changes(old, {}, path) or [ConfigChange(path, _shown(old), ABSENT)]
    if old is _MISSING and isinstance(new, dict):
        return config_changes({}, new, path) or [ConfigChange(path, ABSENT, _shown(new))]
    if old == new:
        return []
    return [ConfigChange(path, _shown(old), _shown(new))]
