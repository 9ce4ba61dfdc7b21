"""A configured source query as one statement: what :class:`~.source.Source` checks it is, and
the text it hands SQLAlchemy."""

from __future__ import annotations

import re


def one_statement(query: str) -> str | None:
    """The first statement of ``query``, without the ``;`` that ends it and the comments that
    may follow; None when another statement follows.

    ``;`` inside quotes and comments does not count; a quote inside a string is doubled (SQL's
    rule; a backslash escapes nothing here, so a query it could hide a statement in is refused).

    >>> one_statement("SELECT 1; -- the end")
    'SELECT 1'
    >>> one_statement("SELECT ';' AS x") == "SELECT ';' AS x"
    True
    >>> one_statement("SELECT 1; DELETE FROM loans") is None
    True
    """
    end: int | None = None  # where the first statement's ";" is
    i, n = 0, len(query)
    while i < n:
        if query.startswith("--", i):
            newline = query.find("\n", i)
            i = n if newline < 0 else newline + 1
        elif query.startswith("/*", i):
            close = query.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif query[i] in "'\"`":
            quote, i = query[i], i + 1
            while i < n and not (query[i] == quote and query[i + 1 : i + 2] != quote):
                i += 2 if query[i] == quote else 1
            i += 1
        elif query[i] == ";":
            end = i if end is None else end
            i += 1
        elif end is not None and not query[i].isspace():
            return None
        else:
            i += 1
    return query if end is None else query[:end]


def query_text(query: str) -> str:
    """A configured query as SQL text for SQLAlchemy: a trailing ``;`` dropped, a final line
    comment closed by a newline, and single colons escaped so that ``'12:30'`` or ``x::int``
    is never read as a bind parameter."""
    body = query.strip().rstrip(";").rstrip()
    return re.sub(r"(?<!:):(?!:)", r"\\:", body) + "\n"
