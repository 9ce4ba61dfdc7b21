"""Report: HTML pages a risk team reads and archives, rendered from the metric store.

- :func:`render_run_report` writes ``<reports_dir>/<model>/<as-of date>.html``, the model run
  report: header, summary, stability, characteristics, discrimination, gains, WOE/IV,
  segments, data quality and an appendix of the formulas and parameters used;
- :func:`render_index` writes ``<reports_dir>/index.html``, every model with its newest run.

Pages are self-contained: inline CSS and SVG, no script, nothing loaded from any host, so a
report can be e-mailed, archived and opened years later exactly as it was written.
"""

from riskmon.report._evidence import open_red_runs
from riskmon.report._register import RegisterEntry, threshold_register
from riskmon.report.context import IndexContext, NoRunError, RunReportContext
from riskmon.report.render import ReportWriteError, render_index, render_run_report
from riskmon.report_files import model_folder, report_path

__all__ = [
    "IndexContext",
    "NoRunError",
    "RegisterEntry",
    "ReportWriteError",
    "RunReportContext",
    "model_folder",
    "open_red_runs",
    "render_index",
    "render_run_report",
    "report_path",
    "threshold_register",
]
