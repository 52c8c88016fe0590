"""Models -> Markdown pages and JSON, for one language and one TRL version. Never reads YAML."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlparse

import jinja2

from .collect import Atlas
from .config import Version
from .i18n import Field, field_states
from .load import Loaded
from .schema import Bounds, Link, RedFlag, SourceRef, Tensor, Text
from .termlinks import TermIndex, link_terms, used_by
from .versions import Resolved, in_range, resolve

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("generator", "templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    autoescape=False,  # Markdown output; text fields are validated to hold no HTML
)
_ENV.filters["oneline"] = lambda s: " ".join(str(s).split())
_ENV.filters["cell"] = lambda s: " ".join(str(s).split()).replace("|", "\\|")
# inline KaTeX HTML placed in Markdown (a table cell): characters Markdown would act on become entities, so that
# `_i ... _j` in the TeX annotation is not turned into <em> and `|` does not split the cell
_ENV.filters["inline_html"] = lambda s: str(s).replace("|", "&#124;").replace("_", "&#95;").replace("*", "&#42;")


def fenced(code: str, lang: str = "") -> str:
    """A fenced code block whose fence is longer than any run of backticks in ``code``: the code cannot close it
    and go on as Markdown (or raw HTML)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    return f"{fence}{lang}\n{code}\n{fence}"


_ENV.filters["fenced"] = fenced

# Markdown passes raw HTML, attribute lists (`{: onclick=...}`) and links of any scheme through. Text fields are
# validated to hold none of them; they are also escaped here, so that text the validator missed still puts no live
# tag, attribute or script link on a page. `code`, **bold**, *emphasis* and [links](https://...) keep working.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_LINK_DEST = re.compile(r"(\]\(\s*[<`]*|^[ ]{0,3}\[[^\]\n]+\]:\s*<?)([^\s)>]+)", re.M)
# a link may go to http(s), mailto or a plain relative path; anything else (a script URL, an entity) goes to '#'
_SAFE_DEST = re.compile(r"(?i)(https?://|mailto:)(?:[^\s&]|&(?!#?\w+;))*|[\w./#-]+")


def _safe_link(m: re.Match[str]) -> str:
    return m.group(1) + (m.group(2) if _SAFE_DEST.fullmatch(m.group(2)) else "#")


def _escape_prose(text: str) -> str:
    return re.sub(r"&(?=#?\w+;)", "&amp;", text).replace("<", "&lt;").replace("{", "&#123;")


def markdown_text(text: str) -> str:
    """Source text, safe to place in Markdown: outside code spans no '<' (raw HTML, autolinks), no entity, no '{'
    (attribute lists), and no link other than to http(s), mailto or a relative path."""
    text = _LINK_DEST.sub(_safe_link, text)
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [_escape_prose(text[pos:m.start()]), m.group(0)]
        pos = m.end()
    return "".join(out) + _escape_prose(text[pos:])

CODE_URLS = {  # where each package's tagged source lives; files in SourceRef are paths inside the package
    "trl": "https://github.com/huggingface/trl/blob/v{version}/{file}#L{line}",
    "transformers": "https://github.com/huggingface/transformers/blob/v{version}/src/{file}#L{line}",
    "accelerate": "https://github.com/huggingface/accelerate/blob/v{version}/src/{file}#L{line}",
}
PACKAGE_NAMES = {"trl": "TRL", "transformers": "Transformers", "accelerate": "Accelerate"}


def page_path(m: Any, lang: str, default_lang: str) -> str:
    """Source path of a metric page in the generated docs, e.g. ``grpo/clip_ratio/low_mean.zh.md``."""
    suffix = "" if lang == default_lang else f".{lang}"
    return f"{m.trainer}/{m.slug}{suffix}.md"


def _rel(from_page: str, to_page: str) -> str:
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


def fmt_number(x: float, lang: str) -> str:
    s = f"{x:g}"
    return s.replace(".", ",") if lang == "vi" else s


@dataclass
class Ctx:
    """What every template of one (language, version) gets."""

    atlas: Atlas
    lang: str
    version: Version

    def __post_init__(self) -> None:
        # every metric as TRL `version.trl` logged it; metrics that release does not log are absent
        self.resolved: dict[str, Resolved] = {}
        for it in self.atlas.metrics:
            if it.model.trainer in self.version.trainers and (r := resolve(it.model, self.version.trl)):
                self.resolved[it.model.id] = r

    @cached_property
    def term_index(self) -> TermIndex:
        """The glossary's terms in this language, for linking them on pages."""
        return TermIndex.build([it.model for it in self.atlas.glossary], self.lang)

    @cached_property
    def glossary_users(self) -> dict[str, list[Any]]:
        """For each glossary entry, the metrics of this version whose text in this language uses it (found, not
        hand-listed): exactly the pages that link to the entry."""
        metrics = [self.resolved[it.model.id].metric for it in self.items()]
        return used_by([it.model for it in self.atlas.glossary], metrics, [self.lang])

    def items(self, trainer: str | None = None) -> list[Loaded]:
        """The source items present in this version (optionally of one trainer), in source order."""
        return [it for it in self.atlas.metrics if it.model.id in self.resolved
                and (trainer is None or it.model.trainer == trainer)]

    def t(self, name: str, /, **kw: Any) -> str:
        """UI string ``name`` in this language, formatted with ``kw`` (which may itself hold a ``key``)."""
        value = self.atlas.ui[self.lang].get(name) or self.atlas.ui[self.atlas.config.default_lang][name]
        return value.format(**kw) if kw else value

    def text(self, value: Text | None) -> str:
        return "" if value is None else value.get(self.lang, self.atlas.config.default_lang)

    def markdown(self, value: Text | None) -> str:
        """``text(value)`` for a Markdown page (see `markdown_text`): what templates get as ``text``."""
        return markdown_text(self.text(value))

    def bounds(self, b: Bounds | None) -> str:
        if b is None or (b.min is None and b.max is None):
            return self.t("unbounded")
        if b.min is not None and b.max is not None:
            sep = "; " if self.lang == "vi" else ", "
            return f"[{fmt_number(b.min, self.lang)}{sep}{fmt_number(b.max, self.lang)}]"
        return f"≥ {fmt_number(b.min, self.lang)}" if b.min is not None else f"≤ {fmt_number(b.max, self.lang)}"

    def flag(self, f: RedFlag) -> str:
        if f.op in ("nan", "rising", "falling"):
            return self.t(f"op_{f.op}")
        return f"`{f.op} {f.value:g}`"

    def math(self, tex: str, display: bool) -> str:
        return self.atlas.math[(tex, display)]

    @cached_property
    def _states(self) -> dict[str, list[Field]]:
        """Per source file, its translated fields whose text in this language is missing or stale."""
        cfg = self.atlas.config
        if self.lang == cfg.default_lang:
            return {}
        stamps = self.atlas.stamps.get(self.lang, {})
        return {it.path: [f for f in field_states(it.doc, self.lang, cfg.default_lang, stamps)
                          if f.state in ("missing", "stale")] for it in self.atlas.sources}

    def notice(self, item: Loaded, section: str, english_href: str, variant: int | None = None) -> str:
        """An admonition saying which texts of ``section`` are shown in English (missing in this language) or
        translate an older English text (stale), with the line to fix; empty when the section is fully current.
        ``variant``: the range of the metric's history the page shows (None: the newest)."""
        out = []
        for state in ("missing", "stale"):
            hits = [f for f in self._states.get(item.path, []) if f.state == state
                    and section_of(f.loc, variant, item.model) == section]
            if hits:
                where = ", ".join(f"`{f.name}` ({self.t('i18n_line', line=f.line)})" for f in hits)
                text = self.t(f"i18n_{state}_text", fields=where, path=item.path, lang=self.lang_name,
                              edit=self.atlas.config.edit_base + item.path, english=english_href)
                out.append(f'!!! {"warning" if state == "stale" else "info"} atlas-i18n-{state} '
                           f'"{self.t(f"i18n_{state}_title", lang=self.lang_name)}"\n\n    {text}\n')
        return "\n".join(out)

    @property
    def lang_name(self) -> str:
        return next(lang.name for lang in self.atlas.config.languages if lang.code == self.lang)

    def english_url(self, page: str) -> str:
        """Root-relative URL of the default-language page built from ``page`` (a docs path such as
        ``grpo/kl.md``): i18n would turn a relative link into this language's page."""
        path = page[:-len("index.md")] if page.endswith("index.md") else page[:-3] + "/"
        return f"{urlparse(self.atlas.config.site_url).path}{self.version.name}/{path}"

    def base(self, **kw: Any) -> dict[str, Any]:
        return dict(t=self.t, text=self.markdown, bounds=self.bounds, flag=self.flag, math=self.math,
                    code_url=code_url, package_name=package_name, version=self.version, lang=self.lang, **kw)


# where each field of a metric file shows on its page (fields absent here, such as `cheatsheet`, are not on it)
_SECTIONS = {"title": "top", "summary": "top", "meaning": "meaning", "formula": "formula", "snippet": "snippet",
             "aggregation": "aggregation", "logged_when": "logged_when", "healthy": "healthy",
             "troubleshooting": "troubleshooting", "corrections": "corrections", "namesakes": "namesakes",
             "conformance": "conformance", "change": "changed_in",
             # glossary entries
             "term": "top", "short": "top", "definition": "top", "example": "example"}


def section_of(loc: tuple, variant: int | None, model: Any) -> str | None:
    """The page section that shows the field at ``loc``, on a page showing variant ``variant`` (None: the newest
    range); None when that page does not show it (another range's replacement, or a replaced top-level field)."""
    if loc[0] == "variants":
        if loc[2] == "change":
            return "changed_in"
        return _SECTIONS.get(str(loc[2])) if loc[1] == variant else None
    if variant is not None and getattr(model.variants[variant], str(loc[0]), None) is not None:
        return None
    return _SECTIONS.get(str(loc[0]))


def code_url(ref: SourceRef) -> str:
    return CODE_URLS[ref.package].format(version=ref.version, file=ref.file, line=ref.line)


def package_name(ref: SourceRef) -> str:
    return f"{PACKAGE_NAMES[ref.package]} {ref.version}"


def _py(value: Any) -> str:
    return repr(value) if not isinstance(value, float) or value == value else "float('nan')"


def example_call(item: Loaded, m: Any = None) -> tuple[str, str]:
    """The worked example as a runnable call, and its expected result."""
    m = m or item.model
    ex = m.snippet.example
    args = []
    for name, spec in ex.inputs.items():
        if isinstance(spec, Tensor):
            dtype = f", dtype=torch.{spec.dtype}" if spec.dtype != "float32" else ""
            nan_safe = json.dumps(spec.value).replace("NaN", "nan")
            if spec.list:
                parts = ", ".join(f"torch.tensor({json.dumps(v).replace('NaN', 'nan')}{dtype})" for v in spec.value)
                args.append(f"    {name}=[{parts}],")
            else:
                args.append(f"    {name}=torch.tensor({nan_safe}{dtype}),")
        else:
            args.append(f"    {name}={_py(spec)},")
    call = f"{m.snippet.function}(\n" + "\n".join(args) + "\n)"
    if "nan" in call:
        call = "nan = float('nan')\n" + call
    expected = "None / NaN" if ex.expected is None else repr(ex.expected)
    return call, expected


def _history(ctx: Ctx, item: Loaded, res: Resolved) -> list[dict[str, Any]]:
    """Every variant of the metric, oldest first, marking the one this version shows."""
    base = item.model
    rows = []
    for var in base.variants:
        end = var.to or base.until
        rows.append({"from": var.from_, "to": end, "change": var.change, "source": var.source,
                     "logged_as": var.logged_as, "current": in_range(ctx.version.trl, var.from_, end)})
    return rows


def link_md(link: Link) -> str:
    return f"[{link.title}]({link.url})" if link.url else link.title


def render_metric(ctx: Ctx, item: Loaded) -> str:
    res = ctx.resolved[item.model.id]
    m = res.metric
    cfg = ctx.atlas.config
    here = page_path(m, cfg.default_lang, cfg.default_lang)
    by_id = {i: r.metric for i, r in ctx.resolved.items()}
    related = [
        {"key": by_id[r].key, "summary": by_id[r].summary,
         "href": _rel(here, page_path(by_id[r], cfg.default_lang, cfg.default_lang))}
        for r in m.related if r in by_id
    ]
    call, expected = example_call(item, m)
    variant = item.model.variants.index(res.variant) if res.variant is not None else None
    english = ctx.english_url(here)
    from .glossary_pages import href_from, metric_terms  # glossary pages render through this module

    tmpl = _ENV.get_template("metric.md.j2")
    md = tmpl.render(**ctx.base(m=m, res=res, base=item.model, history=_history(ctx, item, res), link_md=link_md,
                                trainer=cfg.trainers[m.trainer], related=related, call=call,
                                latest_trl=cfg.latest.trl, terms=metric_terms(ctx, m, here),
                                expected=expected, edit_url=cfg.edit_base + item.path,
                                notice=lambda section: ctx.notice(item, section, english, variant)))
    return link_terms(md, ctx.term_index, lambda e: href_from(here, e, cfg.default_lang),
                      skip_sections=("glossary", "related", "sources", "changed-in"))


def _trainer_rows(ctx: Ctx, trainer: str) -> list[dict[str, Any]]:
    cfg = ctx.atlas.config
    items = [ctx.resolved[it.model.id].metric for it in ctx.items(trainer)]
    order = {c: i for i, c in enumerate(cfg.trainers[trainer].categories)}
    items.sort(key=lambda m: (order[m.category], m.order, m.key))
    return [
        {"m": m, "href": _rel(f"{trainer}/index.md", page_path(m, cfg.default_lang, cfg.default_lang)),
         "healthy": _healthy_cell(ctx, m)}
        for m in items
    ]


def _healthy_cell(ctx: Ctx, m: Any) -> str:
    """The healthy range when there is one; otherwise what the maths allows and the expected trend."""
    if m.healthy.range:
        return ctx.bounds(m.healthy.range)
    return f"{ctx.bounds(m.healthy.bounds)} · {ctx.t('trend_' + m.healthy.trend)}"


def render_trainer_index(ctx: Ctx, trainer: str) -> str:
    rows = _trainer_rows(ctx, trainer)
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["m"].category, []).append(r)
    cfg = ctx.atlas.config
    from .cheatsheet import sheet_links  # the sheets render through this module

    here = f"{'' if ctx.lang == cfg.default_lang else ctx.lang + '/'}{trainer}/"
    return _ENV.get_template("trainer_index.md.j2").render(**ctx.base(
        trainer=cfg.trainers[trainer], trainer_name=trainer.upper(), groups=list(groups.items()),
        checked=sum(r["m"].conformance.checked for r in rows), total=len(rows),
        sheet=sheet_links(ctx, trainer, here),
        edit_url=cfg.edit_base + f"locales/{ctx.lang}/ui.yaml"))


def render_coverage(ctx: Ctx, trainer: str) -> str:
    rows = _trainer_rows(ctx, trainer)
    cfg = ctx.atlas.config
    return _ENV.get_template("coverage.md.j2").render(**ctx.base(
        trainer=cfg.trainers[trainer], trainer_name=trainer.upper(), rows=rows,
        checked=sum(r["m"].conformance.checked for r in rows), total=len(rows),
        edit_url=cfg.edit_base + "metrics/" + trainer + "/"))


def render_home(ctx: Ctx) -> str:
    cfg = ctx.atlas.config
    trainers = [
        {"class_": cfg.trainers[name].class_, "href": f"{name}/index.md",
         "count": len(ctx.items(name))}
        for name in ctx.version.trainers
    ]
    return _ENV.get_template("home.md.j2").render(**ctx.base(
        trainers=trainers, edit_url=cfg.edit_base + f"locales/{ctx.lang}/ui.yaml"))


def line_for(cfg: Any, release: str) -> Version:
    """The site version whose `covers` range holds ``release`` (releases before every range: the oldest line)."""
    for ver in cfg.versions:
        if in_range(release, ver.covers[0], ver.covers[1]):
            return ver
    return cfg.versions[-1]


def render_which_version(ctx: Ctx) -> str:
    """Every TRL release, newest first, with the site version to read for it."""
    cfg = ctx.atlas.config
    prefix = "" if ctx.lang == cfg.default_lang else f"{ctx.lang}/"
    first = {t: min((it.model.since for it in ctx.atlas.metrics if it.model.trainer == t), key=_release_key)
             for t in cfg.trainers}
    rows = []
    for release in reversed(cfg.trl_releases):
        line = line_for(cfg, release)
        missing = [cfg.trainers[t].class_ for t in line.trainers if _release_key(release) < _release_key(first[t])]
        remark = ctx.t("which_missing", classes=", ".join(f"`{c}`" for c in missing)) if missing else (
            "" if release == line.trl else ctx.t("which_see_changes", trl=line.trl))
        rows.append({"release": release, "line": line, "remark": remark,
                     # root-relative: another version is outside this version's docs, so mkdocs cannot check it
                     "href": f"{urlparse(cfg.site_url).path}{line.name}/{prefix}"})
    return _ENV.get_template("which_version.md.j2").render(**ctx.base(
        rows=rows, edit_url=cfg.edit_base + "atlas.yml"))


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in release.split("."))


def metrics_api(atlas: Atlas, version: Version, base_url: str) -> dict[str, Any]:
    """The machine-readable index shipped as ``<version>/api/metrics.json``."""
    cfg = atlas.config
    ctx = Ctx(atlas, cfg.default_lang, version)
    out = []
    for it in ctx.items():
        res = ctx.resolved[it.model.id]
        m = res.metric
        urls = {}
        for lang in cfg.lang_codes:
            prefix = "" if lang == cfg.default_lang else f"{lang}/"
            urls[lang] = f"{base_url}{prefix}{m.trainer}/{m.slug}/"
        h = m.healthy
        out.append({
            "id": m.id, "key": m.key, "logged_as": res.logged_as, "trainer": m.trainer, "category": m.category,
            "since": m.since, "until": m.until, "differs_from_latest": res.differs_from_latest,
            "title": {lang: m.title.get(lang) for lang in cfg.lang_codes},
            "summary": {lang: m.summary.get(lang) for lang in cfg.lang_codes},
            "url": urls,
            "healthy": {
                "bounds": h.bounds.model_dump(), "range": h.range.model_dump() if h.range else None,
                "trend": h.trend,
                "red_flags": [{"op": f.op, "value": f.value} for f in h.red_flags],
            },
            "conformance_checked": m.conformance.checked,
            "source": cfg.edit_base + it.path,
        })
    return {"trl": version.trl, "version": version.name, "metrics": out}
