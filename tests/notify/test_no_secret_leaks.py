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


#: the password of a reference pass whose outputs tell which strings riskmon writes anyway
REFERENCE_PASSWORD = "Zq8-reference-Zq8"
_reference: dict[str, str] = {}


def _secrets(password: str, hook: HookServer) -> list[str]:
    token = quote(password, safe="")
    found = [password, hook.url(f"/services/{token}"), token]
    if len(unquote(password)) >= MIN_SECRET_CHARS:
        found.append(unquote(password))
    return found


def _outputs(password: str, hook: HookServer, mail: MailServer) -> dict[str, str]:
    """Everything riskmon writes when ``password`` is the source's and the SMTP server's
    password and the webhook's token: what it printed, logged, stored and sent."""
    hook_url = hook.url(f"/services/{quote(password, safe='')}")
    source_port, store_port = free_port(), free_port()
    source_url = f"postgresql+psycopg://risk:{password}@127.0.0.1:{source_port}/loans"
    env = {
        "SOURCE_URL": f"{source_url}?connect_timeout=3",
        "HOOK_URL": hook_url,
        "SMTP_PASSWORD": password,
    }
    runner = CliRunner()
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        config = _config(folder, mail)
        base = ["-v", "-c", str(config)]

        checked = runner.invoke(cli, [*base, "config", "check"], env=env)
        assert checked.exit_code == 0, checked.output
        assert f"risk:***@127.0.0.1:{source_port}/loans" in checked.output
        assert f"email:{E_MAIL}" in checked.output  # e-mail addresses are left alone
        out["config check"] = checked.output

        assert runner.invoke(cli, [*base, "db", "upgrade"], env=env).exit_code == 0
        run = runner.invoke(cli, [*base, "run", "--as-of", AS_OF, "--format", "json"], env=env)
        assert run.exit_code == 3, run.output
        (outcome,) = json.loads(run.stdout)
        assert f"risk:***@127.0.0.1:{source_port}/loans" in outcome["error"]
        out |= {"JSON output": run.stdout, "log lines": run.stderr}

        report = runner.invoke(cli, [*base, "report", "retail_pd", "--as-of", AS_OF], env=env)
        assert report.exit_code == 0, report.output
        # the store's database, its WAL, the run's report and the index
        written = [p for p in folder.rglob("*") if p.is_file() and p != config]
        assert any(p.suffix == ".html" for p in written)
        for path in written:
            out[path.name] = path.read_bytes().decode("utf-8", "replace")

        store_url = f"postgresql+psycopg://risk:{password}@127.0.0.1:{store_port}/riskmon"
        unreachable = runner.invoke(cli, ["db", "current", "--url", store_url])
        assert unreachable.exit_code == 4, unreachable.output
        assert f"risk:***@127.0.0.1:{store_port}/riskmon" in unreachable.output
        out["unreachable store"] = unreachable.output

    assert len(hook.requests) == 1, "the webhook heard of the failed run"
    out["webhook body"] = json.dumps(hook.requests[0].body)
    assert len(mail.messages) == 1, "the e-mail channel heard of the failed run"
    assert E_MAIL in mail.messages[0]["To"]
    out["e-mail"] = mail.messages[0].as_string()
    return out


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
    if not _reference:
        reference_mail = smtp_server(login=("riskmon", REFERENCE_PASSWORD))
        _reference.update(_outputs(REFERENCE_PASSWORD, hook_server(), reference_mail))
    hook = hook_server()
    secrets = _secrets(password, hook)
    # a string riskmon writes with any password (a word of a page, a run of JSON indentation)
    # is no leak when it happens to be the password
    assume(len(set(password)) >= MIN_DISTINCT_CHARS)
    assume(not any(s in text for s in secrets for text in _reference.values()))
    outputs = _outputs(password, hook, smtp_server(login=("riskmon", password)))
    leaks = {where: [s for s in secrets if s in text] for where, text in outputs.items()}
    assert not {where: found for where, found in leaks.items() if found}
