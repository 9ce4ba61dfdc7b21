"""Reading an export back: a workbook's or a CSV file's rows, cut into the sections they hold."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl

Row = tuple[Any, ...]


def _trimmed(row: Row) -> Row:
    cells = list(row)
    while cells and cells[-1] in (None, ""):
        cells.pop()
    return tuple(cells)


def workbook_rows(path: Path) -> dict[str, list[Row]]:
    """Every sheet of the workbook at ``path``, by name: its rows, trailing empty cells cut."""
    book = openpyxl.load_workbook(path, read_only=True)
    try:
        return {
            name: [_trimmed(row) for row in book[name].iter_rows(values_only=True)]
            for name in book.sheetnames
        }
    finally:
        book.close()


def _number(text: str) -> Any:
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def csv_rows(path: Path) -> list[Row]:
    """The rows of a CSV file, numbers read as numbers and empty cells as None."""
    with path.open(newline="", encoding="utf-8") as handle:
        return [_trimmed(tuple(_number(c) for c in row)) for row in csv.reader(handle)]


@dataclass
class Block:
    """One section of a sheet: its number and title, column names and rows (as dicts)."""

    number: str
    title: str
    header: Row
    rows: list[dict[str, Any]]
    raw: list[Row]


def blocks(rows: list[Row]) -> list[Block]:
    """The sections of an area's sheet, in order."""
    out: list[Block] = []
    i = 2  # the area's title and a blank row
    while i < len(rows):
        number, title = rows[i]
        header = rows[i + 1]
        i += 2
        data: list[Row] = []
        while i < len(rows) and rows[i]:
            data.append(rows[i])
            i += 1
        i += 1  # the blank row
        padded = [r + (None,) * (len(header) - len(r)) for r in data]
        out.append(
            Block(
                str(number),
                str(title),
                header,
                [dict(zip(header, r, strict=False)) for r in padded],
                data,
            )
        )
    return out


def same(exported: Any, stored: Any) -> bool:
    """Whether an exported cell holds a stored value: a workbook holds a number to 16
    significant digits (openpyxl writes ``%.16g``), a CSV file exactly."""
    if stored is None or exported is None:
        return exported is None and stored is None
    return math.isclose(float(exported), float(stored), rel_tol=1e-15, abs_tol=0.0)


def segment(cell: str) -> str:
    """The stored segment of a segment cell."""
    return "" if cell == "(all)" else cell
