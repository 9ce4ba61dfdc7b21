"""A snapshot of everything the demo stores and renders, to show a change leaves it as it was.

The snapshot reads the metric store with plain SQL over the columns listed below (a column
added to a table is not part of it until it is listed), and the report pages with what changes
from one build to the next (times, paths, versions, configuration hashes) masked.
``python -m tests.golden.snapshot FOLDER`` writes the snapshot of a demo built in FOLDER.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

GOLDEN = Path(__file__).with_name("demo.json.gz")

_TABLES = {
    "runs": "m.name, r.as_of, r.status, r.n_current, r.n_matured, r.n_unmatured, r.error, "
    "b.version AS baseline_version",
    "figures": "f.name, f.variable, f.segment, f.population, f.value, f.reason, f.params",
    "bin_stats": "s.variable, s.segment, s.population, s.bin_index, s.label, s.lower, s.upper, "
    "s.n_total, s.total, s.n_bads, s.bads, s.expected_share, s.actual_share, s.woe, "
    "s.contribution, s.smoothed",
    "alerts": "a.rule, a.variable, a.segment, a.status, a.value, a.thresholds, a.message",
}
_QUERIES = {
    "runs": "SELECT {cols} FROM runs r JOIN models m ON m.id = r.model_id "
    "LEFT JOIN baselines b ON b.id = r.baseline_id ORDER BY m.name, r.as_of",
    "figures": "SELECT m.name AS model, r.as_of, {cols} FROM figures f JOIN runs r ON r.id = "
    "f.run_id JOIN models m ON m.id = r.model_id",
    "bin_stats": "SELECT m.name AS model, r.as_of, {cols} FROM bin_stats s JOIN runs r ON r.id = "
    "s.run_id JOIN models m ON m.id = r.model_id",
    "alerts": "SELECT m.name AS model, r.as_of, {cols} FROM alerts a JOIN runs r ON r.id = "
    "a.run_id JOIN models m ON m.id = r.model_id",
    "baseline_figures": "SELECT m.name AS model, b.version, f.name, f.variable, f.segment, "
    "f.value, f.reason, f.params FROM baseline_figures f JOIN baselines b ON b.id = "
    "f.baseline_id JOIN models m ON m.id = b.model_id",
    "baseline_variables": "SELECT m.name AS model, b.version, v.variable, v.kind, v.binning, "
    "v.params FROM baseline_variables v JOIN baselines b ON b.id = v.baseline_id "
    "JOIN models m ON m.id = b.model_id",
    "baseline_bins": "SELECT m.name AS model, b.version, v.variable, x.segment, x.bin_index, "
    "x.label, x.n_total, x.total, x.n_goods, x.goods, x.n_bads, x.bads, x.share "
    "FROM baseline_bins x JOIN baseline_variables v ON v.id = x.variable_id JOIN baselines b "
    "ON b.id = v.baseline_id JOIN models m ON m.id = b.model_id",
}
_MASKS = (
    (re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC"), "<time>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<hash>"),
    (re.compile(r"\b[0-9a-f]{12,16}\b"), "<hash>"),
    (re.compile(r"riskmon \d+\.\d+[\w.+-]*"), "riskmon <version>"),
)


def _value(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def _rows(connection: Any, name: str) -> list[dict[str, Any]]:
    query = _QUERIES[name].format(cols=_TABLES.get(name, ""))
    rows = [
        {k: _value(v) for k, v in row._mapping.items()} for row in connection.execute(text(query))
    ]
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True, default=str))
    return rows


def mask_html(html: str, folder: Path) -> str:
    """A report page with what differs between two builds of the same demo masked."""
    html = html.replace(str(folder.resolve()), "<folder>")
    for pattern, replacement in _MASKS:
        html = pattern.sub(replacement, html)
    return html


def take(folder: Path) -> dict[str, Any]:
    """The snapshot of the demo built in ``folder``."""
    engine = create_engine(f"sqlite:///{folder / 'riskmon.db'}")
    try:
        with engine.connect() as connection:
            snapshot: dict[str, Any] = {name: _rows(connection, name) for name in _QUERIES}
    finally:
        engine.dispose()
    reports = folder / "reports"
    snapshot["reports"] = {
        str(path.relative_to(reports)): mask_html(path.read_text(encoding="utf-8"), folder)
        for path in sorted(reports.rglob("*.html"))
    }
    return snapshot


def write(snapshot: dict[str, Any], path: Path = GOLDEN) -> None:
    data = json.dumps(snapshot, sort_keys=True, indent=0, default=str).encode()
    path.write_bytes(gzip.compress(data, mtime=0))


def read(path: Path = GOLDEN) -> dict[str, Any]:
    return dict(json.loads(gzip.decompress(path.read_bytes())))


if __name__ == "__main__":
    write(take(Path(sys.argv[1])))
