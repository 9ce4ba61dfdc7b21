"""Writing the sheets: an xlsx workbook (openpyxl) or a folder of CSV files, each written under
a temporary name beside its target and renamed into place, so that a failed export leaves
nothing half-written and an earlier export whole."""

from __future__ import annotations

import csv
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from riskmon.errors import EXIT_UNAVAILABLE, RiskmonError
from riskmon.export._layout import Cell, Sheet

#: text a spreadsheet would read as a formula (CSV injection): written with a leading quote
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: characters an xlsx file cannot hold (XML 1.0's C0 controls), written as \xNN escapes
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class ExportWriteError(RiskmonError):
    """The export could not be written (a full disk, a folder riskmon may not write)."""


class MissingWriterError(RiskmonError):
    """The xlsx format needs openpyxl, which is not installed."""

    exit_code = EXIT_UNAVAILABLE


def _escaped(value: str) -> str:
    return _ILLEGAL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def csv_value(value: Cell) -> str | float | int:
    """``value`` as a CSV file holds it: text a spreadsheet would run as a formula quoted."""
    if value is None:
        return ""
    if isinstance(value, str):
        return f"'{value}" if value.startswith(_FORMULA_START) else value
    return value


def _write_xlsx(sheets: Sequence[Sheet], path: Path) -> None:
    try:
        from openpyxl import Workbook
        from openpyxl.styles import Font
    except ImportError as exc:
        raise MissingWriterError(
            "--format xlsx needs openpyxl: pip install 'riskmon[xlsx]' (or use --format csv)"
        ) from exc
    book = Workbook()
    book.remove(book.active)  # type: ignore[arg-type]  # the empty sheet a workbook starts with
    bold = Font(bold=True)
    for sheet in sheets:
        page = book.create_sheet(sheet.name)
        for index, row in enumerate(sheet.rows, start=1):
            page.append([_escaped(v) if isinstance(v, str) else v for v in row])
            for cell in page[index] if row else ():
                if isinstance(cell.value, str):
                    cell.data_type = "s"  # never a formula, whatever the text starts with
                if index - 1 in sheet.headings:
                    cell.font = bold
        for letter, width in _widths(sheet).items():
            page.column_dimensions[letter].width = width
    book.save(path)


#: the widest a column is made, in characters; longer text wraps into the cells beside it
_MAX_WIDTH = 40


def _widths(sheet: Sheet) -> dict[str, float]:
    """Column widths that fit the sheet's tables (titles, a row of one or two cells, may run
    on into the empty cells beside them)."""
    from openpyxl.utils import get_column_letter

    widest: dict[int, int] = {}
    for row in sheet.rows:
        if len(row) <= 2:
            continue
        for i, value in enumerate(row, start=1):
            shown = len(value) if isinstance(value, str) else 12 if value is not None else 0
            widest[i] = max(widest.get(i, 0), min(shown, _MAX_WIDTH))
    return {get_column_letter(i): float(w + 2) for i, w in widest.items()}


def _write_csv(sheets: Sequence[Sheet], folder: Path) -> None:
    folder.mkdir()
    for sheet in sheets:
        with (folder / sheet.file).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            for row in sheet.rows:
                writer.writerow([csv_value(v) for v in row])


def write_xlsx(sheets: Sequence[Sheet], path: Path) -> Path:
    """Write ``sheets`` as the workbook ``path`` (replacing it)."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_xlsx(sheets, temporary)
        os.replace(temporary, path)
    except OSError as exc:
        raise ExportWriteError(f"cannot write {path.absolute()}: {exc.strerror or exc}") from exc
    finally:
        with suppress(OSError):
            temporary.unlink(missing_ok=True)
    return path


def write_csv(sheets: Sequence[Sheet], folder: Path) -> Path:
    """Write ``sheets`` as one CSV file each into ``folder`` (replacing the folder)."""
    if folder.exists() and not folder.is_dir():
        raise ExportWriteError(f"cannot write {folder.absolute()}: it is a file, not a folder")
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=parent))
    except OSError as exc:
        raise ExportWriteError(f"cannot write {folder.absolute()}: {exc.strerror or exc}") from exc
    old = parent / f".{folder.name}.{uuid.uuid4().hex}.old"
    try:
        _write_csv(sheets, staging / "new")
        if folder.exists():
            os.replace(folder, old)
        os.replace(staging / "new", folder)
    except OSError as exc:
        if old.exists() and not folder.exists():
            os.replace(old, folder)  # the earlier export back in place
        raise ExportWriteError(f"cannot write {folder.absolute()}: {exc.strerror or exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return folder
