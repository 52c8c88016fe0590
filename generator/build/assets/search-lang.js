// mkdocs-static-i18n merges every language into one search index, so results mix languages.
// Keep only the results in the language of the page being read.
(function () {
  const config = JSON.parse(document.getElementById("__config")?.textContent || "{}");
  const root = new URL(config.base || ".", location.href).pathname;
  const langs = Array.from(document.querySelectorAll("a.md-select__link[hreflang]"), (a) => a.hreflang);
  const current = document.documentElement.lang;
  const fallback = langs[0] || current; // the default language has no path prefix

  function languageOf(href) {
    const path = new URL(href, location.href).pathname;
    if (!path.startsWith(root)) return null;
    const first = path.slice(root.length).split("/")[0];
    return langs.includes(first) && first !== fallback ? first : fallback;
  }

  function prune(list) {
    list.querySelectorAll(":scope > li.md-search-result__item").forEach((item) => {
      const link = item.querySelector("a[href]");
      if (link && languageOf(link.href) !== current) item.remove();
    });
  }

  const observer = new MutationObserver((mutations) => {
    for (const m of mutations) {
      const list = m.target.closest && m.target.closest(".md-search-result__list");
      if (list) prune(list);
    }
  });
  document.addEventListener("DOMContentLoaded", () => {
    const list = document.querySelector(".md-search-result__list");
    if (list) observer.observe(list, { childList: true });
  });
})();
