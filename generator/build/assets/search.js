// The header's search. Each built line holds Pagefind's index (pagefind/ at the line's root), split by language and
// in chunks: the first search of a page fetches the index of the page's language only, and only the chunks the typed
// words need. Pagefind folds diacritics, so Vietnamese typed without them still matches. The box opens from
// the header's button or with "/"; Escape closes it; the arrow keys walk the results.
(function () {
  const config = JSON.parse(document.getElementById("atlas-search-config")?.textContent || "null");
  const header = document.querySelector(".md-header__inner");
  if (!config || !header) return;
  const SHOWN = 10;
  let pagefind = null;
  let asked = 0;

  function load() {
    pagefind ??= import(config.bundle).then(async (pf) => { await pf.init(); return pf; });
    return pagefind;
  }

  function element(tag, className, text) {
    const el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // Pagefind marks the words found with <mark>; everything else of an excerpt is shown as text
  const decoder = document.createElement("textarea");
  function excerpt(html) {
    const p = element("span", "atlas-search__excerpt");
    html.split(/(<mark>.*?<\/mark>)/).forEach((part) => {
      const marked = /^<mark>(.*)<\/mark>$/.exec(part);
      decoder.innerHTML = marked ? marked[1] : part; // a textarea only decodes entities, keeping every space
      p.append(marked ? element("mark", "", decoder.value) : decoder.value);
    });
    return p;
  }

  const button = element("button", "md-header__button md-icon atlas-search__button");
  button.type = "button";
  button.setAttribute("aria-label", config.label);
  button.title = `${config.label} (/)`;
  button.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="10" cy="10" r="6.5" fill="none" ' +
    'stroke="currentColor" stroke-width="2"/><path d="M15 15l5.5 5.5" stroke="currentColor" stroke-width="2.2" ' +
    'stroke-linecap="round"/></svg>';
  const dialog = element("dialog", "atlas-search");
  dialog.setAttribute("aria-label", config.label);
  const input = element("input", "atlas-search__input");
  Object.assign(input, { type: "search", placeholder: config.label, autocomplete: "off", spellcheck: false });
  input.setAttribute("aria-label", config.label);
  const status = element("p", "atlas-search__status", config.hint);
  status.setAttribute("aria-live", "polite");
  const list = element("ol", "atlas-search__results");
  dialog.append(input, status, list);
  header.insertBefore(button, header.querySelector(".md-header__source"));
  document.body.append(dialog);

  // Each reading of the query: a word that starts with a letter the language's readers type for another (atlas.yml's
  // search_letters, Vietnamese d for đ, which no diacritic folding reaches) is read both ways; at most 8 readings.
  // A query typed with any diacritic comes from a keyboard that has the other letter too: it is read as typed.
  function readings(query) {
    if (/[^\x00-\x7f]/.test(query)) return [query];
    let out = [""];
    for (const word of query.split(/(\s+)/)) {
      const first = word.charAt(0);
      const lower = first.toLowerCase();
      const alternatives = [word, ...[...(config.letters?.[lower] || "")].map(
        (letter) => (first === lower ? letter : letter.toUpperCase()) + word.slice(1))];
      out = out.length * alternatives.length > 8 ? out.map((r) => r + word)
        : out.flatMap((r) => alternatives.map((a) => r + a));
    }
    return out;
  }

  // every page found by any reading, best score first
  async function find(query) {
    const pf = await load();
    const best = new Map();
    for (const found of await Promise.all(readings(query).map((q) => pf.search(q)))) {
      for (const r of found.results) if (!(best.get(r.id)?.score >= r.score)) best.set(r.id, r);
    }
    return [...best.values()].sort((a, b) => b.score - a.score);
  }
  // for the tests: the URL of every page a query finds, not only of those the list shows
  window.atlasSearch = async (query) => Promise.all((await find(query.normalize("NFC"))).map(
    async (r) => (await r.data()).url));

  function item(page) {
    const link = element("a", "atlas-search__result");
    link.href = page.url;
    if (page.meta.section) link.append(element("span", "atlas-search__section", page.meta.section));
    link.append(element("span", "atlas-search__title", page.meta.title || page.url), excerpt(page.excerpt));
    const li = element("li");
    li.append(link);
    return li;
  }

  // The best result shows as soon as its excerpt has come; the others follow together. The list is aria-busy until
  // then (the tests wait for that).
  async function search() {
    const query = input.value.normalize("NFC").trim();
    const ticket = ++asked;
    list.setAttribute("aria-busy", "true");
    if (!query) {
      list.replaceChildren();
      status.textContent = config.hint;
      list.setAttribute("aria-busy", "false");
      return;
    }
    const results = await find(query);
    const pages = results.slice(0, SHOWN).map((r) => r.data());
    const first = pages.length ? await pages[0] : null;
    if (ticket !== asked) return; // a later keystroke already asked again
    const n = results.length;
    status.textContent = n === 0 ? config.none : n === 1 ? config.one : config.other.replace("#", String(n));
    list.replaceChildren(...(first ? [item(first)] : []));
    const rest = await Promise.all(pages.slice(1));
    if (ticket !== asked) return;
    list.append(...rest.map(item));
    list.setAttribute("aria-busy", "false");
  }

  function open() {
    load();
    if (!dialog.open) dialog.showModal();
    input.focus();
    input.select();
  }

  // The engine (Pagefind's script, its WebAssembly and the language's small metadata file, about 90 KB compressed,
  // the same on every page and so fetched once) starts loading at once, beside the page's own late requests (fonts),
  // so that it is ready when the reader types: a search then fetches only the index chunks of its words. Material's
  // own search loaded the whole index on every page.
  load();
  button.addEventListener("click", open);
  input.addEventListener("input", search);
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
  dialog.addEventListener("keydown", (event) => {
    const links = [...list.querySelectorAll("a")];
    const at = links.indexOf(document.activeElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = event.key === "ArrowDown" ? at + 1 : at - 1;
      (next < 0 ? input : links[Math.min(next, links.length - 1)])?.focus();
    } else if (event.key === "Enter" && event.target === input && links.length) {
      event.preventDefault();
      links[0].click();
    }
  });
  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLElement &&
      (event.target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName));
    if (event.key === "/" && !typing && !dialog.open && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      open();
    }
  });
})();
