"""What a notification says: one :class:`Notice` per run, rendered for Slack, JSON and e-mail.

A notice is built either from the outcome of the run that just finished or, for a delivery
retried on a later run, from what the store holds about the earlier run; both render the same
way, and a retried one says it is late and for which as-of date.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from riskmon import __version__
from riskmon.notify._delivery import bounded_error
from riskmon.records import FAILED, AlertLike, Status
from riskmon.visible import visible

#: at most this many alerts are listed in a message's text (the JSON object holds them all)
MAX_LISTED_ALERTS = 25

_SLACK_ICON = {
    Status.RED: ":red_circle:",
    Status.AMBER: ":large_orange_circle:",
    Status.GREEN: ":large_green_circle:",
}
_SLACK_ICON_OTHER = ":white_circle:"
_SLACK_ICON_FAILED = ":x:"


@dataclass(frozen=True)
class AlertLine:
    """One alert as a notification shows it."""

    rule: str
    status: str
    value: float | None
    thresholds: Mapping[str, Any]
    message: str
    variable: str = ""
    segment: str = ""

    @classmethod
    def of(cls, alert: AlertLike) -> AlertLine:
        """The line of a computed (:class:`AlertRecord`) or a stored alert."""
        return cls(
            alert.rule,
            alert.status,
            alert.value,
            dict(alert.thresholds),
            alert.message,
            alert.variable,
            alert.segment,
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "variable": self.variable,
            "segment": self.segment,
            "status": self.status,
            "value": _finite(self.value),
            "thresholds": {k: _finite(v) for k, v in self.thresholds.items()},
            "message": self.message,
        }


@dataclass(frozen=True)
class Notice:
    """Everything a notification about one run says."""

    model: str
    as_of: dt.date
    status: str  # succeeded | failed
    alert_status: str
    alerts: tuple[AlertLine, ...] = ()
    run_id: int | None = None
    error: str | None = None
    report_url: str | None = None
    #: True for a delivery retried after it failed when the run finished
    late: bool = False

    @property
    def state(self) -> str:
        """``FAILED`` for a failed run, else its worst alert status."""
        return FAILED if self.status == "failed" else self.alert_status

    @property
    def headline(self) -> str:
        """``retail_pd 2025-03-31: RED`` (the e-mail subject without its prefix)."""
        return f"{self.model} {self.as_of.isoformat()}: {self.state}"

    def listed(self) -> list[AlertLine]:
        """The alerts that are not green, worst first (RED, AMBER, then NOT_EVALUABLE)."""
        return sorted(
            (a for a in self.alerts if a.status != Status.GREEN),
            key=lambda a: Status(a.status).severity,
            reverse=True,
        )

    def late_note(self) -> str:
        return (
            f"This notification is late: it could not be delivered when the run of "
            f"{self.model} as of {self.as_of.isoformat()} finished, and is sent again now."
        )


def _finite(value: Any) -> Any:
    # NaN and infinities are not JSON; no figure should carry one, but a message must still go
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _where(alert: AlertLine) -> str:
    parts = [p for p in (alert.variable, alert.segment) if p]
    return f" [{', '.join(parts)}]" if parts else ""


def _slack_escape(text: str) -> str:
    # the three characters Slack's mrkdwn asks to be escaped in literal text
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _alert_lines(alerts: Iterable[AlertLine], *, bullet: str, escape: bool) -> list[str]:
    alerts = list(alerts)
    lines = []
    for alert in alerts[:MAX_LISTED_ALERTS]:
        # a segment or level may hold control characters and bidi overrides: shown escaped
        text = visible(f"{alert.status} {alert.rule}{_where(alert)}: {alert.message}")
        lines.append(f"{bullet}{_slack_escape(text) if escape else text}")
    if len(alerts) > MAX_LISTED_ALERTS:
        lines.append(f"{bullet}… and {len(alerts) - MAX_LISTED_ALERTS} more")
    return lines


def slack_text(notice: Notice) -> str:
    """The message in Slack's mrkdwn: headline, late note, alerts or error, report link."""
    if notice.status == "failed":
        icon = _SLACK_ICON_FAILED
    else:
        icon = _SLACK_ICON.get(Status(notice.alert_status), _SLACK_ICON_OTHER)
    model = _slack_escape(notice.model)
    lines = [f"{icon} *{model}* as of {notice.as_of.isoformat()}: *{notice.state}*"]
    if notice.late:
        lines.append(f"_{_slack_escape(notice.late_note())}_")
    if notice.status == "failed":
        error = bounded_error(notice.error or "no error recorded").replace("```", "'''")
        lines.append(f"The run failed:\n```{_slack_escape(error)}```")
    else:
        listed = notice.listed()
        if listed:
            lines += _alert_lines(listed, bullet="• ", escape=True)
        else:
            lines.append(f"All {len(notice.alerts)} alert rules are green.")
    if notice.report_url:
        lines.append(f"<{notice.report_url}|Open the report>")
    return "\n".join(lines)


def webhook_payload(notice: Notice) -> dict[str, Any]:
    """The JSON body of a webhook: Slack-ready ``text`` and a structured ``riskmon`` object."""
    return {
        "text": slack_text(notice),
        "riskmon": {
            "model": notice.model,
            "as_of": notice.as_of.isoformat(),
            "status": notice.status,
            "alert_status": notice.alert_status,
            "state": notice.state,
            "late": notice.late,
            "run_id": notice.run_id,
            "error": bounded_error(notice.error) if notice.error else None,
            "report_url": notice.report_url,
            "alerts": [a.as_json() for a in notice.alerts],
            "riskmon_version": __version__,
        },
    }


def email_subject(notice: Notice) -> str:
    """``[riskmon] retail_pd 2025-03-31: RED``, with ``(late)`` for a retried delivery."""
    return f"[riskmon] {notice.headline}{' (late)' if notice.late else ''}"


def plain_text(notice: Notice, *, report_line: str) -> str:
    """The plain-text e-mail body; ``report_line`` says where the report is."""
    lines = [f"{notice.model} as of {notice.as_of.isoformat()}: {notice.state}", ""]
    if notice.late:
        lines += [notice.late_note(), ""]
    if notice.status == "failed":
        lines += ["The run failed:", f"    {bounded_error(notice.error or 'no error recorded')}"]
    else:
        listed = notice.listed()
        if listed:
            lines.append(f"Alerts that are not green ({len(listed)} of {len(notice.alerts)}):")
            lines += _alert_lines(listed, bullet="  - ", escape=False)
        else:
            lines.append(f"All {len(notice.alerts)} alert rules are green.")
    lines += ["", report_line, "", "-- ", f"riskmon {__version__}"]
    return "\n".join(lines) + "\n"
