"""The HTML report: one self-contained file (styles inline, each flagged curve as an inline SVG plot drawn by
matplotlib), readable offline."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from ..render.env import HTML
from .evaluate import Diagnosis, Finding
from .report import Words, as_json, spans_text

COLOURS = {"bug": "#7b1fa2", "red_flag": "#c62828", "warning": "#ef6c00"}


def plot_svg(d: Diagnosis, f: Finding) -> str:
    """The finding's key over the whole run, the steps where the rule holds shaded, as SVG markup."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    s = d.history.series[f.key]
    fig = Figure(figsize=(6.4, 2.0), dpi=96)
    ax = fig.add_subplot()
    ax.plot(s.steps, s.values, lw=1.2, color="#1565c0", marker="." if len(s.steps) < 60 else None)
    for a, b in f.spans:
        ax.axvspan(a - 0.5, b + 0.5, color=COLOURS[f.severity], alpha=0.18, lw=0)
    for bound in (f.rule.get("lo"), f.rule.get("hi"), f.rule.get("value")):
        if isinstance(bound, int | float) and f.rule["kind"] != "trend":
            ax.axhline(bound, color=COLOURS[f.severity], lw=0.8, ls="--")
    ax.set_xlabel("step", fontsize=8)
    ax.set_title(f.key, fontsize=9, family="monospace")
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)
    fig.tight_layout()
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata={"Date": None})  # no date: the same run gives the same file
    svg = out.getvalue()
    return svg[svg.index("<svg"):]


def _code(text: str) -> Any:
    """Escaped text whose `code` spans are set as code."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def write_html(d: Diagnosis, book: dict[str, Any], lang: str, path: Path) -> None:
    from markupsafe import Markup

    w = Words(book, lang)
    data = as_json(d, lang, book)
    findings = []
    for f, item in zip(d.findings, data["findings"], strict=True):
        item.update(words=_code(item["words"]), means=_code(item["means"]), try_first=_code(item["try_first"]))
        findings.append({**item, "label": w(f"doctor_sev_{f.severity}"), "colour": COLOURS[f.severity],
                         "where": w("doctor_where", steps=spans_text(f), logs=f.logs, first=w.num(f.first),
                                    last=w.num(f.last)),
                         "svg": Markup(plot_svg(d, f))})
    html = HTML.get_template("doctor_report.html.j2").render(
        t=w, lang=lang, d=data, findings=findings, summary=w("doctor_summary", alarms=d.alarms,
                                                              warnings=len(d.findings) - d.alarms)
        if d.findings else w("doctor_none"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
