"""Where riskmon writes a model's reports: one folder a model, one page a run. Apart from the
report, so that a notification finds a run's page without loading the pages' machinery."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,99}$")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_.\-]+")


def model_folder(model: str) -> str:
    """The folder name of ``model``'s reports: the name itself when it is a safe file name.

    >>> model_folder("retail_pd")
    'retail_pd'
    >>> model_folder("../x")
    'x-d6b96a97'
    """
    if _SAFE_NAME.match(model):
        return model
    readable = _UNSAFE_CHARS.sub("_", model).strip("._")[:60] or "model"
    digest = hashlib.sha256(model.encode()).hexdigest()[:8]
    return f"{readable}-{digest}"


def report_path(reports_dir: Path, model: str, as_of: dt.date) -> Path:
    """Where the report of ``model``'s run as of ``as_of`` is written."""
    return Path(reports_dir) / model_folder(model) / f"{as_of.isoformat()}.html"
