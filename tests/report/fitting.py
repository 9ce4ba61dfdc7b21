"""What "fits" means for a report page, measured by the browser that lays it out.

:func:`layout_problems` runs :data:`LAYOUT_PROBLEMS` in a loaded page and returns one line per
problem, none when the page fits. At every width:

- the page never scrolls sideways (``document.scrollingElement.scrollWidth`` is at most the
  viewport's width); the outermost elements sticking out are named;
- no table is wider than the box the page lays it out in (the parent of its scroll box, or its
  own parent), and no cell's content spills out of its cell;
- no element clips its content sideways (``overflow-x: hidden`` or ``clip``), except a
  visually hidden one (1 px: a phone's header row); nothing but a table's box scrolls;
- every chart (an ``svg``) fits its box, and every label it draws lies inside it.

At a desktop's width a table's box may not scroll either: a table that is whole only after
scrolling does not fit, since a reader must see every column, Status included, at once. On a
phone a wide table may scroll inside its box, as long as that box fits; and a table shown as
cards (``display: block``) names every value it shows (``data-label``), since its header row is
hidden.
"""

from __future__ import annotations

from typing import Any

#: the JavaScript run in the page: ``(phone) => [problem, ...]``
LAYOUT_PROBLEMS = r"""(phone) => {
  const problems = [];
  const view = window.innerWidth;
  const tol = 0.5;
  const name = (e) => {
    const section = e.closest('section[id]');
    const classes = e.classList.length ? '.' + Array.from(e.classList).join('.') : '';
    return (section ? '#' + section.id + ' ' : '') + e.tagName.toLowerCase() + classes;
  };
  const style = (e) => getComputedStyle(e);
  const scrolls = (e) => ['auto', 'scroll'].includes(style(e).overflowX);
  const clips = (e) => ['hidden', 'clip'].includes(style(e).overflowX);
  // the visually hidden (a phone's header row: 1 px, clipped), or inside such an element
  const concealed = (e) => {
    for (let a = e; a && a !== document.body; a = a.parentElement) {
      const r = a.getBoundingClientRect();
      if (r.width <= 1 || r.height <= 1) return true;
    }
    return false;
  };
  const room = (e) => {
    const s = style(e);
    return e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  };

  const page = document.scrollingElement.scrollWidth;
  if (page > view) {
    const out = Array.from(document.body.querySelectorAll('*')).filter((e) => {
      const parent = e.parentElement.getBoundingClientRect();
      return e.getBoundingClientRect().right > view + tol && parent.right <= view + tol;
    });
    problems.push(`the page scrolls sideways: ${page} px wide in a ${view} px viewport` +
      (out.length ? `, by ${out.slice(0, 5).map(name).join(', ')}` : ''));
  }

  for (const t of document.querySelectorAll('table')) {
    const wrap = t.parentElement && scrolls(t.parentElement) ? t.parentElement : null;
    const box = (wrap || t).parentElement;
    const width = Math.ceil(Math.max(t.getBoundingClientRect().width, t.scrollWidth));
    const shown = wrap ? Math.ceil(wrap.getBoundingClientRect().width) : width;
    const fits = phone ? shown <= room(box) + tol : width <= room(box) + tol;
    if (!fits) {
      problems.push(`${name(t)} is ${width} px wide in a ${Math.floor(room(box))} px box` +
        (wrap && phone ? ` (its scroll box: ${shown} px)` : ''));
    } else if (wrap && !phone && wrap.scrollWidth > wrap.clientWidth + 1) {
      problems.push(`${name(t)} shows ${wrap.clientWidth} of its ${wrap.scrollWidth} px ` +
        'only by scrolling');
    }
    if (phone && style(t).display === 'block') {
      const bare = Array.from(t.querySelectorAll('td')).filter(
        (c) => !c.dataset.label && c.textContent.trim() && style(c).display !== 'none');
      if (bare.length) {
        problems.push(`${name(t)}: its cards show ${bare.length} values without their ` +
          `column's name (data-label), the first "${bare[0].textContent.trim().slice(0, 30)}"`);
      }
    }
  }

  for (const c of document.querySelectorAll('td, th')) {
    if (c.scrollWidth > c.clientWidth + 1 && style(c).display !== 'none' && !concealed(c)) {
      problems.push(`${name(c)} "${c.textContent.trim().slice(0, 30)}" spills out of its ` +
        `cell: ${c.scrollWidth} px in ${c.clientWidth}`);
    }
  }

  // a table's scroll box is judged with its table, above
  for (const e of document.body.querySelectorAll('*')) {
    if (e.scrollWidth <= e.clientWidth + 1 || e.closest('svg') || concealed(e)) continue;
    const judged = e.querySelector(':scope > table') !== null;
    if (clips(e) || (scrolls(e) && !judged)) {
      problems.push(`${name(e)} hides ${e.scrollWidth - e.clientWidth} px of its content`);
    }
  }

  for (const s of document.querySelectorAll('svg')) {
    const r = s.getBoundingClientRect();
    if (r.width > room(s.parentElement) + tol) {
      problems.push(`${name(s)} is ${Math.ceil(r.width)} px wide in a ` +
        `${Math.floor(room(s.parentElement))} px box`);
    }
    for (const label of s.querySelectorAll('text')) {
      const b = label.getBoundingClientRect();
      if (b.width && (b.left < r.left - 1 || b.right > r.right + 1 ||
                      b.top < r.top - 1 || b.bottom > r.bottom + 1)) {
        problems.push(`${name(s)}: the label "${label.textContent.trim().slice(0, 30)}" is ` +
          'drawn outside the chart');
      }
    }
  }
  return problems;
}"""


def layout_problems(page: Any, *, phone: bool) -> list[str]:
    """Every way the loaded ``page`` does not fit its viewport, one line each (see the module)."""
    return list(page.evaluate(LAYOUT_PROBLEMS, phone))
