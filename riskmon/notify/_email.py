"""E-mail channel: a plain-text message through the configured SMTP server, report attached.

The report goes along as an attachment when it exists and is no larger than
``smtp.max_attachment_bytes``; otherwise the message links to it (``store.reports_url``) or says
that it is not attached, and why.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

from riskmon.config import SmtpConfig
from riskmon.notify._deadline import Deadline, DeliveryTimeout
from riskmon.notify._delivery import DeliveryError, bounded_error
from riskmon.notify._message import Notice, email_subject, plain_text
from riskmon.redact import MASK


def _attachment(notice: Notice, report: Path | None, limit: int) -> tuple[bytes | None, str]:
    """The report's bytes (or None), and the body line that says where the report is."""
    link = f"Report: {notice.report_url}" if notice.report_url else None
    if report is None:
        return None, link or "Report: not attached (no report was written for this run)."
    try:
        size = report.stat().st_size
        if size <= limit:
            return report.read_bytes(), f"Report: attached ({report.name})."
    except OSError as exc:
        reason = f"it cannot be read: {exc.strerror or exc}"
    else:
        reason = f"it is {size:,} bytes, more than the {limit:,} allowed"
    return None, link or f"Report: not attached ({reason})."


def build_email(
    notice: Notice, *, to: str, sender: str, report: Path | None, max_attachment_bytes: int
) -> EmailMessage:
    """The message for ``notice``: subject, plain-text body, and the report when it fits."""
    content, report_line = _attachment(notice, report, max_attachment_bytes)
    message = EmailMessage()
    message["Subject"] = email_subject(notice)
    message["From"] = sender
    message["To"] = to
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message.set_content(plain_text(notice, report_line=report_line))
    if content is not None and report is not None:
        message.add_attachment(content, maintype="text", subtype="html", filename=report.name)
    return message


def send_email(
    smtp: SmtpConfig, message: EmailMessage, *, deadline: Deadline | None = None
) -> None:
    """Send ``message`` through ``smtp`` (SSL or STARTTLS, and login, when configured), all of
    it within ``deadline`` (``smtp.timeout_seconds`` then bounds each socket operation).

    Raises
    ------
    DeliveryError
        The server cannot be reached, refused the login, or refused the message; the text is
        password-masked and bounded. :class:`DeliveryTimeout` when the deadline passed.
    """
    if deadline is None:
        deadline = Deadline(smtp.timeout_seconds)
    try:
        with deadline.enforced():
            _send(smtp, message, deadline)
    except DeliveryError:
        if deadline.fired:
            raise DeliveryTimeout(
                f"SMTP {smtp.host}:{smtp.port}: not done within {deadline.seconds:.3g} s"
            ) from None
        raise


def _send(smtp: SmtpConfig, message: EmailMessage, deadline: Deadline) -> None:
    context = ssl.create_default_context()
    try:
        client: smtplib.SMTP
        timeout = deadline.timeout(smtp.timeout_seconds)
        if smtp.ssl:
            client = smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=timeout, context=context)
        else:
            client = smtplib.SMTP(smtp.host, smtp.port, timeout=timeout)
        deadline.watch(client.sock)
        with client:
            if smtp.starttls and not smtp.ssl:
                client.starttls(context=context)
                deadline.watch(client.sock)  # the TLS socket replaces the plain one
            if smtp.username:
                client.login(smtp.username, smtp.password or "")
            client.send_message(message)
    except smtplib.SMTPAuthenticationError as exc:
        raise DeliveryError(_smtp_error(smtp, "login refused", exc)) from None
    except smtplib.SMTPRecipientsRefused as exc:
        refused = ", ".join(sorted(exc.recipients))
        raise DeliveryError(_smtp_error(smtp, f"recipient refused ({refused})", exc)) from None
    except (smtplib.SMTPException, OSError) as exc:
        raise DeliveryError(_smtp_error(smtp, "cannot send", exc)) from None


def _smtp_error(smtp: SmtpConfig, what: str, exc: BaseException) -> str:
    detail = str(exc) or type(exc).__name__
    if smtp.password:  # a server may quote what it was sent
        detail = detail.replace(smtp.password, MASK)
    return bounded_error(f"SMTP {smtp.host}:{smtp.port}: {what}: {detail}")
