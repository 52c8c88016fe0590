"""Strict quality gates on the built site: every internal link and #fragment of every version and language
answers over HTTP, the 404 page speaks every language, and the HTML of the latest version is valid."""

from __future__ import annotations

import shutil
import subprocess
import urllib.error
import urllib.request

import pytest

from .conftest import ROOT
from .linkcheck import check_site

pytestmark = pytest.mark.xdist_group("site")

VERSIONS = ["1.16", "1.12", "0.26", "0.11"]


def test_every_link_and_fragment_resolves(site_url):
    public = "http://127.0.0.1:8000/"  # atlas.yml site_url: links to it are checked on the local server
    starts = ["/", "/latest/"] + [f"/{v}/{p}" for v in VERSIONS for p in ("", "zh/", "vi/")]
    report = check_site(site_url, public, starts)
    assert not report.broken, f"{len(report.broken)} broken links, e.g.:\n" + "\n".join(report.broken[:20])
    assert report.pages > 300 and report.links > 10000, (report.pages, report.links)
    # the only other hosts are plain links, never loaded by the page: TRL's and transformers' code, and the papers
    # and notes a formula comes from (Schulman's KL estimators, arXiv)
    cited = {"github.com", "joschu.net", "arxiv.org"}
    assert {u.split("/")[2] for u in report.external} <= cited, sorted(u for u in report.external
                                                                      if u.split("/")[2] not in cited)[:5]


@pytest.mark.parametrize("path", ["/1.16/no/such/page/", "/0.26/zh/grpo/nope/"])
def test_404_page_speaks_every_language(site_url, path):
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(site_url + path)
    assert info.value.code == 404
    body = info.value.read().decode("utf-8")
    for text in ("Page not found", "页面不存在", "Không tìm thấy trang"):
        assert text in body
    version = path.split("/")[1]
    assert f'href="/{version}/zh/versions/"' in body and f'href="/{version}/vi/"' in body


def test_html_of_the_latest_version_is_valid(built_site):
    pages = sum(1 for _ in (built_site / "1.16").rglob("*.html"))
    assert pages > 500, pages  # the checker finds nothing wrong in a folder without pages
    vnu = ROOT / "node_modules/vnu-jar/build/dist/vnu.jar"
    if not vnu.exists() or not shutil.which("java"):
        pytest.fail("the HTML checker needs `npm ci` (vnu-jar) and Java (openjdk)")
    # one short run of the checker: the quick JIT compiler alone and one garbage collector thread spend a fifth less
    # CPU; the stack size is the checker's own advice for its schema; no language detection (it only ever warns)
    proc = subprocess.run(
        ["java", "-Xss4m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", str(vnu), "--skip-non-html",
         "--errors-only", "--no-langdetect", "--format", "gnu",
         # Material's own markup: autocomplete on its checkbox toggles, and labels of its hidden toggles
         "--filterpattern", r".*(autocomplete|“for” attribute of the “label” element).*", str(built_site / "1.16")],
        capture_output=True, text=True, timeout=600)
    errors = [ln for ln in proc.stderr.splitlines() + proc.stdout.splitlines() if ln.strip()]
    assert proc.returncode == 0 and not errors, "\n".join(errors[:20])


def test_the_server_compresses_text_as_a_static_host_does(site_url, built_site):
    import gzip

    for path, file in (("/1.16/grpo/kl/", "1.16/grpo/kl/index.html"),
                       ("/1.16/api/metrics.json", "1.16/api/metrics.json")):
        req = urllib.request.Request(site_url + path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req) as resp:
            assert resp.headers["Content-Encoding"] == "gzip", path
            body = resp.read()
        assert gzip.decompress(body) == (built_site / file).read_bytes()
        assert len(body) < (built_site / file).stat().st_size / 3
    with urllib.request.urlopen(site_url + "/1.16/grpo/kl/") as resp:  # a client that does not ask for it
        assert resp.headers["Content-Encoding"] is None
