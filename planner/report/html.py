"""The frame every HTML report shares: one self-contained page (no external resources, no
JavaScript; plots inline as base64 PNG, :mod:`planner.report.plots`), its styles, and the
building blocks the views (``planner/report/views/<kind>.py``) fill it with.

Every value a view puts in a page goes through :func:`e` (:func:`planner.report.escape.html`);
:func:`table` takes cells already escaped, so a view can put markup (a tag, a link) in one.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

from planner.report.escape import html as e

__all__ = ["e", "num", "img", "page", "table", "tag", "lead"]

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1180px;color:#1d1d1f;padding:0 16px;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:1.2em 0 .3em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.sub{color:#666;font-size:.9em}.tag{display:inline-block;padding:1px 8px;border-radius:10px;
font-weight:600;font-size:.85em}
.buy{background:#d6f5e8;color:#05603f}.over{background:#fdf0d5;color:#8a5a00}
.unreachable{background:#eee;color:#555}
.Bbetter{background:#d6f5e8;color:#05603f}.Abetter{background:#fde0dc;color:#8a1c0e}
.equivalent{background:#dff0fb;color:#0b4f78}.undecided{background:#fdf0d5;color:#8a5a00}
.plots{display:flex;flex-wrap:wrap;gap:6px}.plots3 img{width:calc((100% - 12px) / 3);height:auto;box-sizing:border-box}.plots img{border:1px solid #eee;max-width:100%}
code{font-size:.85em;background:#f4f4f6;padding:0 3px;border-radius:3px;word-break:break-all}
.note{color:#555;font-size:.88em}.nw{white-space:nowrap}
.lead{font-size:1.08em;background:#f7f7f9;border-left:4px solid #0072B2;padding:6px 10px}
.why{font-size:.92em;background:#fbfbf4;border-left:4px solid #E69F00;padding:4px 10px}
"""


def num(x, fmt: str, none: str = "—") -> str:
    """``x`` formatted by ``fmt``; ``none`` for None or a non-finite float."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return none
    return format(x, fmt)


def img(png: bytes, alt: str) -> str:
    """An inline ``<img>`` of PNG bytes."""
    from planner.report.plots import data_uri

    return f'<img src="{data_uri(png)}" alt="{e(alt)}" class="plot">'


def lead(sentences) -> str:
    """The headline paragraph every page opens with (the view's ``headline`` sentences)."""
    if isinstance(sentences, str):
        sentences = [sentences]
    return "<p class=\"lead\">" + "<br>".join(e(s) for s in sentences if s) + "</p>"


def tag(label: str, cls: str = "") -> str:
    """A coloured label (``<span class="tag buy">buy</span>``); ``cls`` from the view's own
    words (class names are not user text, but are escaped all the same)."""
    return f"<span class=\"tag {e(cls)}\">{e(label)}</span>"


def page(title: str, body: str) -> str:
    """The whole page: ``body`` (HTML the view built) in the shared frame and styles."""
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{e(title)}</title><style>{_CSS}</style></head><body>\n{body}\n"
            f"<p class=\"note\">spec-planner report, generated {stamp}.</p></body></html>\n")


def table(headers: list[str], rows: list[list[str]], num_cols=frozenset()) -> str:
    """A table: ``headers`` are text (escaped here); ``rows`` are already-escaped HTML cells;
    ``num_cols`` (column indexes) right-aligned."""
    th = "".join(f"<th>{e(h)}</th>" for h in headers)
    trs = []
    for r in rows:
        tds = "".join(f"<td class=\"num\">{c}</td>" if i in num_cols else f"<td>{c}</td>"
                      for i, c in enumerate(r))
        trs.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(trs)}</tbody></table>"
