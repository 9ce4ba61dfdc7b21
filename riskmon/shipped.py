"""Where riskmon's templates and migrations are, installed or in a checkout.

A built riskmon ships them inside the package, as ``riskmon.templates`` and
``riskmon.migrations`` (``pyproject.toml`` maps the top-level folders there), and an editable
install maps them the same way. Python started in a checkout's root (``python -m riskmon``,
a notebook) imports ``riskmon`` from the checkout instead, where the two folders sit beside
the package: they are found there. Both the report and the store ask this one function.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Literal

from riskmon.errors import RiskmonError

#: what riskmon ships besides its code
Shipped = Literal["templates", "migrations"]


def shipped_folder(name: Shipped) -> Path:
    """The folder of riskmon's ``templates`` or ``migrations``.

    >>> (shipped_folder("templates") / "base.html").is_file()
    True
    """
    spec = importlib.util.find_spec(f"riskmon.{name}")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    beside = Path(__file__).resolve().parent.parent / name  # a checkout's top-level folder
    if (beside / "__init__.py").is_file():
        return beside
    raise RiskmonError(
        f"riskmon's {name} are neither in the installed package (riskmon.{name}) nor beside "
        f"it ({beside}): reinstall riskmon"
    )


__all__ = ["Shipped", "shipped_folder"]
