"""Render the report pages with Jinja2 and write them under ``store.reports_dir``.

Layout of the reports folder::

    <reports_dir>/index.html                 every model, its newest run, links
    <reports_dir>/<model>/<as-of date>.html  one model run report per run

A model name that is not a safe folder name (the store accepts any text) gets a folder named
from its safe characters and a hash of the whole name, so no name can point a report outside
its folder. Files are written to a temporary name and then renamed, so a reader never sees a
half-written report.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
import uuid
from contextlib import suppress
from functools import cache
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup

from riskmon import __version__
from riskmon.config import RiskmonConfig
from riskmon.errors import RiskmonError
from riskmon.figures import CATALOG
from riskmon.report.context import (
    IndexContext,
    NoRunError,
    RunReportContext,
    find_run,
    index_entry,
    run_report_context,
)
from riskmon.report_files import model_folder, report_path
from riskmon.shipped import shipped_folder
from riskmon.store import MetricStore
from riskmon.visible import visible

log = logging.getLogger(__name__)

INDEX = "index.html"
_REPORT_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.html$")


# --------------------------------------------------------------------------- formatting


def _number(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def _signed(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:+.{digits}f}"


def _percent(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}%}"


def _count(value: float | int | None) -> str:
    return "n/a" if value is None else f"{round(value):,}"


def _weight(value: float | None) -> str:
    """A sum of weights: in whole units from 100 (an exposure), else to two decimals."""
    if value is None:
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{round(value):,}"
    return f"{value:,.2f}"


def _show(value: float | None, fmt: str) -> str:
    """A summary-table value in its format: decimal, percent, count or ratio."""
    if fmt == "percent":
        return _percent(value, 2)
    if fmt == "count":
        return _count(value)
    if fmt == "ratio":
        return _number(value, 2)
    return _number(value, 4)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6g}"


def _breakable(name: str) -> Markup:
    """An identifier (a rule's name) that may wrap after each underscore in a narrow cell."""
    return Markup("_<wbr>").join(Markup.escape(part) for part in str(name).split("_"))


def _status_class(status: str | None) -> str:
    return "st-" + (status or "none").lower().replace("_", "-")


def _timestamp(value: dt.datetime | None) -> str:
    return "n/a" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def _param(value: object, digits: int = 4) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e-3 and value != 0 else f"{value:.{digits}f}"
    return str(value)


def _finalize(value: object) -> object:
    """Every value a page shows, as it shows it: text through :func:`visible` (markup the
    page made stays markup), then autoescaped."""
    if isinstance(value, Markup):
        return Markup(visible(str(value)))
    return visible(value) if isinstance(value, str) else value


def environment() -> Environment:
    """The Jinja2 environment of riskmon's templates (autoescaped, strict about names), and of
    the partials of the families kept outside riskmon (``Family.templates``), riskmon's first."""
    folders = [str(shipped_folder("templates"))]
    folders += [str(f.templates) for f in CATALOG if f.templates is not None]
    return _environment(tuple(dict.fromkeys(folders)))


class _CompiledTemplates(FileSystemBytecodeCache):
    """The templates' compiled code, kept between processes in Jinja2's private per-user
    folder (``$TMPDIR/_jinja2-cache-<uid>``): compiling the report's templates takes about
    0.4 s, loading them a few milliseconds (each ``riskmon run`` would compile them again).
    A file is named after the template, riskmon's version and the settings it was compiled
    with, and Jinja2 checks it against the template's source, so an edited template is
    compiled again. A folder riskmon cannot read or write costs the compiling, nothing else."""

    def load_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):
            super().dump_bytecode(bucket)


def compiled_templates(env: Environment, directory: str | None = None) -> _CompiledTemplates | None:
    """The cache of ``env``'s compiled templates in ``directory`` (default: Jinja2's own),
    or None when there is no folder for it."""
    settings = (
        __version__,
        env.autoescape,
        env.trim_blocks,
        env.lstrip_blocks,
        env.keep_trailing_newline,
        env.finalize is not None,
    )
    digest = hashlib.sha256(repr(settings).encode()).hexdigest()[:12]
    try:
        return _CompiledTemplates(directory, pattern=f"riskmon-{digest}-%s.cache")
    except (OSError, RuntimeError) as exc:  # RuntimeError: Jinja2 found its folder unsafe
        log.debug("templates compiled in every process: %s", exc)
        return None


@cache
def _environment(folders: tuple[str, ...], cache_directory: str | None = None) -> Environment:
    env = Environment(
        loader=FileSystemLoader(list(folders)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )
    env.bytecode_cache = compiled_templates(env, cache_directory)
    env.filters.update(
        number=_number,
        signed=_signed,
        percent=_percent,
        count=_count,
        weight=_weight,
        show=_show,
        status_class=_status_class,
        timestamp=_timestamp,
        param=_param,
        score=_score,
        breakable=_breakable,
    )
    env.globals["riskmon_version"] = __version__
    return env


def render_page(template: str, page: RunReportContext | IndexContext, **extra: object) -> str:
    """The HTML of one page."""
    return environment().get_template(template).render(page=page, **extra)


class ReportWriteError(RiskmonError):
    """A report page could not be written (a full disk, a folder riskmon may not write)."""


def _write(path: Path, html: str) -> Path:
    # a unique name next to the target (so the rename is atomic), opened as a normal file
    # so that it gets the usual permissions
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(html, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        with suppress(OSError):  # nothing to remove when the folder itself failed
            temporary.unlink(missing_ok=True)
        # a full disk fails on a write, whose error names no file: name the report
        reason = exc.strerror or str(exc)
        raise ReportWriteError(f"cannot write the report {path.absolute()}: {reason}") from exc
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


# --------------------------------------------------------------------------- public API


def render_run_report(
    config: RiskmonConfig,
    store: MetricStore,
    model: str,
    as_of: dt.date | None = None,
    *,
    run_id: int | None = None,
    neighbours: bool = True,
) -> Path:
    """Write the report of ``model``'s run as of ``as_of`` (its newest run when None; the run
    ``run_id`` when given, as a run that just finished knows it) to
    ``<reports_dir>/<model>/<as_of>.html`` and return that path.

    The report links the model's previous and next runs; their reports, when written, are
    rewritten so that they link this one (``neighbours``).

    Everything shown is read from ``store``; a failed run gives a report with its error. A
    model that is no longer configured still renders, with the windows its run recorded. Raises
    :class:`~riskmon.report.context.NoRunError` when there is no such run.
    """
    run = find_run(store, model, as_of) if run_id is None else store.run_by_id(run_id)
    if run is None:
        raise NoRunError(f"no run {run_id} in the metric store")
    configured = {m.name: m for m in config.models}
    page = run_report_context(store, run, model=configured.get(model))
    written = _write(
        report_path(config.store.reports_dir, model, run.as_of),
        render_page("model_run.html", page),
    )
    if neighbours:
        # the runs before and after link to this one now: rewrite their reports (those that
        # were written) so that their previous/next links reach it
        for link in (page.nav.previous, page.nav.next):
            if (
                link is None
                or not report_path(config.store.reports_dir, model, link.as_of).exists()
            ):
                continue
            try:
                render_run_report(config, store, model, link.as_of, neighbours=False)
            except ReportWriteError as exc:  # this run's own report is written all the same
                log.warning("the report as of %s was not relinked: %s", link.as_of, exc)
    return written


def _reports_on_disk(reports_dir: Path, model: str) -> dict[dt.date, str]:
    folder = model_folder(model)
    found: dict[dt.date, str] = {}
    directory = Path(reports_dir) / folder
    if not directory.is_dir():
        return found
    for path in directory.iterdir():
        match = _REPORT_FILE.match(path.name)
        if match:
            day = dt.date.fromisoformat(match[1])
            found[day] = f"{quote(folder)}/{quote(path.name)}"
    return found


def index_context(config: RiskmonConfig, store: MetricStore) -> IndexContext:
    """The index page: every configured model, then every other model the store knows."""
    configured = [m.name for m in config.models]
    stored = [name for name in store.model_names() if name not in configured]
    reports_dir = Path(config.store.reports_dir)
    return IndexContext(
        models=tuple(
            index_entry(
                store,
                name,
                configured=name in configured,
                hrefs=_reports_on_disk(reports_dir, name),
            )
            for name in [*configured, *stored]
        ),
        report_version=__version__,
    )


def render_index(config: RiskmonConfig, store: MetricStore) -> Path:
    """Write ``<reports_dir>/index.html``: every model with its newest run, key figures and a
    link to its report, and return that path."""
    html = render_page(INDEX, index_context(config, store))
    return _write(Path(config.store.reports_dir) / INDEX, html)
