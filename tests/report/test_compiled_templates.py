"""The report's templates are compiled once and loaded by the next process: the compiled code
is kept in a cache folder, checked against the template's source, and named after the
settings it was compiled with; a cache folder riskmon cannot use only costs the compiling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jinja2 import Environment

from riskmon.report.render import _environment, compiled_templates

PAGE = "{% for x in values %}\n  {{ x | percent }} {{ label }}\n{% endfor %}\n"


def _fresh(folder: Path, cache: Path) -> Environment:
    """An environment as a new process makes it (``_environment`` is cached per process)."""
    env: Environment = _environment.__wrapped__((str(folder),), str(cache))  # type: ignore[attr-defined]
    return env


def _never_compiles(env: Environment) -> None:
    def compile(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compiled again")

    env.compile = compile  # type: ignore[method-assign]


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "page.html").write_text(PAGE)
    return folder


def test_a_template_compiled_once_is_loaded_by_the_next_process_and_renders_the_same(
    templates: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    first = _fresh(templates, cache).get_template("page.html")
    (kept,) = cache.iterdir()
    assert kept.name.startswith("riskmon-")
    assert kept.stat().st_size > 0
    second_env = _fresh(templates, cache)
    _never_compiles(second_env)
    second = second_env.get_template("page.html")
    page = {"values": [0.125, 0.5], "label": "<b>"}
    assert second.render(**page) == first.render(**page)
    assert "&lt;b&gt;" in second.render(**page)  # compiled with autoescape on


def test_an_edited_template_is_compiled_again(templates: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    _fresh(templates, cache).get_template("page.html")
    (templates / "page.html").write_text("edited {{ label }}\n")
    assert _fresh(templates, cache).get_template("page.html").render(label="x") == "edited x\n"


def test_a_cache_folder_that_cannot_be_used_costs_only_the_compiling(
    templates: Path, tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    template = _fresh(templates, not_a_folder).get_template("page.html")
    assert template.render(values=[0.5], label="a").split() == ["50.0%", "a"]


def test_other_settings_compile_into_other_files(tmp_path: Path) -> None:
    a = compiled_templates(Environment(trim_blocks=True), str(tmp_path))
    b = compiled_templates(Environment(trim_blocks=False), str(tmp_path))
    assert a is not None
    assert b is not None
    assert a.pattern != b.pattern
