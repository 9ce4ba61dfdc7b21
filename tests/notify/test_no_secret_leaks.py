"""No secret leaves riskmon, whatever characters it holds: generated passwords go through
`config check`, the logs, a failed run's stored error, its HTML report and the index, the JSON
output, the store's files, a webhook body and an e-mail — on real servers on 127.0.0.1."""

from __future__ import annotations

import json
import string
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from riskmon.cli import cli
from riskmon.redact import MIN_SECRET_CHARS

from ..collect.loans import model_config
from .conftest import HookServer, MailServer, free_port

#: every printable ASCII character, space included, none of them encoded
PRINTABLE = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
PASSWORDS = st.text(PRINTABLE, min_size=8, max_size=30)
#: a password of fewer distinct characters could be a run of spaces that JSON indentation holds
MIN_DISTINCT_CHARS = 5
AS_OF = "2025-03-31"
E_MAIL = "risk-team@example.com"


def _config(folder: Path, mail: MailServer) -> Path:
    model = model_config("sqlite:///placeholder.db", performance_window="2 months")
    document: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    # secrets come from the environment, as the README says to keep them
    document["source"]["url"] = "${SOURCE_URL}"
    document["notify"] = [
        {"webhook": "${HOOK_URL}", "notify_on": "always"},
        {"email": E_MAIL, "notify_on": "always"},
    ]
    config = {
        "store": {"url": f"sqlite:///{folder / 'store.db'}", "reports_dir": str(folder / "rep")},
        "smtp": {
            "host": "127.0.0.1",
            "port": mail.port,
            "username": "riskmon",
            "password": "${SMTP_PASSWORD}",
            "timeout_seconds": 5,
        },
        "models": [document],
    }
    path = folder / "riskmon.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _leaks(secrets: list[str], text: str) -> list[str]:
    return [s for s in secrets if s in text]


def _check_no_leak(password: str, hook: HookServer, mail: MailServer) -> None:
    token = quote(password, safe="")
    hook_url = hook.url(f"/services/{token}")
    source_port, store_port = free_port(), free_port()
    source_url = f"postgresql+psycopg://risk:{password}@127.0.0.1:{source_port}/loans"
    secrets = [password, hook_url, token]
    if len(unquote(password)) >= MIN_SECRET_CHARS:
        secrets.append(unquote(password))
    env = {"SOURCE_URL": f"{source_url}?connect_timeout=3", "HOOK_URL": hook_url}
    env["SMTP_PASSWORD"] = password
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        config = _config(folder, mail)
        base = ["-v", "-c", str(config)]

        checked = runner.invoke(cli, [*base, "config", "check"], env=env)
        assert checked.exit_code == 0, checked.output
        assert f"risk:***@127.0.0.1:{source_port}/loans" in checked.output
        assert f"email:{E_MAIL}" in checked.output  # e-mail addresses are left alone
        assert not _leaks(secrets, checked.output)

        assert runner.invoke(cli, [*base, "db", "upgrade"], env=env).exit_code == 0
        run = runner.invoke(cli, [*base, "run", "--as-of", AS_OF, "--format", "json"], env=env)
        assert run.exit_code == 3, run.output
        (outcome,) = json.loads(run.stdout)
        assert f"risk:***@127.0.0.1:{source_port}/loans" in outcome["error"]
        assert not _leaks(secrets, run.stdout), "JSON output"
        assert not _leaks(secrets, run.stderr), "log lines"

        report = runner.invoke(cli, [*base, "report", "retail_pd", "--as-of", AS_OF], env=env)
        assert report.exit_code == 0, report.output
        # the store's database, its WAL, the run's report and the index
        written = [p for p in folder.rglob("*") if p.is_file() and p != config]
        assert any(p.suffix == ".html" for p in written)
        for path in written:
            content = path.read_bytes().decode("utf-8", "replace")
            assert not _leaks(secrets, content), path.name

        store_env = {**env, "STORE_URL": f"postgresql+psycopg://risk:{password}@127.0.0.1:"}
        unreachable = runner.invoke(
            cli,
            ["db", "current", "--url", f"{store_env['STORE_URL']}{store_port}/riskmon"],
            env=store_env,
        )
        assert unreachable.exit_code == 4, unreachable.output
        assert f"risk:***@127.0.0.1:{store_port}/riskmon" in unreachable.output
        assert not _leaks(secrets, unreachable.output)

    assert hook.requests, "the webhook heard of the failed run"
    for request in hook.requests:
        assert not _leaks(secrets, json.dumps(request.body)), "webhook body"
        assert not _leaks(secrets, request.path) or request.path == f"/services/{token}"
    assert mail.messages, "the e-mail channel heard of the failed run"
    for message in mail.messages:
        assert not _leaks(secrets, message.as_string()), "e-mail"
        assert E_MAIL in message["To"]


@given(password=PASSWORDS)
@example(password="p@ssW0rd@host")
@example(password="pa/ss word:#?@x")
@example(password=string.punctuation)
@example(password="risk:p%40ss %zz")
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_generated_password_appears_anywhere(
    password: str,
    hook_server: Callable[..., HookServer],
    smtp_server: Callable[..., MailServer],
) -> None:
    assume(len(set(password)) >= MIN_DISTINCT_CHARS)
    hook = hook_server()
    mail = smtp_server(login=("riskmon", password))
    _check_no_leak(password, hook, mail)
