// Version selector: stay on the same page, in the same language, when the chosen TRL version has it; otherwise
// land on that version's trainer index, which then says that the key did not exist yet (or any more).
(function () {
  const config = JSON.parse(document.getElementById("__config")?.textContent || "{}");
  const root = new URL(config.base || ".", location.href); // this version's root, e.g. /1.16/
  const langs = () => Array.from(document.querySelectorAll("a.md-select__link[hreflang]"), (a) => a.hreflang);

  function older(a, b) {
    const x = a.split(".").map(Number), y = b.split(".").map(Number);
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  }

  async function exists(url) {
    try {
      return (await fetch(url, { method: "HEAD" })).ok;
    } catch (e) {
      return false;
    }
  }

  async function go(targetRoot) {
    const rel = location.pathname.slice(root.pathname.length); // e.g. zh/grpo/clip_ratio/low_mean/
    const same = new URL(rel, targetRoot);
    if (await exists(same)) return same.href + location.hash;
    const parts = rel.split("/").filter(Boolean);
    const known = langs();
    const lang = parts.length && known.includes(parts[0]) && parts[0] !== known[0] ? parts.shift() + "/" : "";
    const [trainer, ...key] = parts;
    const here = root.pathname.split("/").filter(Boolean).pop();
    const there = targetRoot.pathname.split("/").filter(Boolean).pop();
    const index = new URL(lang + (trainer ? trainer + "/" : ""), targetRoot);
    if (!trainer || !(await exists(index))) return new URL(lang, targetRoot).href;
    if (key.length) {
      index.searchParams.set("absent", key.join("/"));
      index.searchParams.set("was", older(there, here) ? "yet" : "more");
    }
    return index.href;
  }

  // capture phase: runs before Material's own handler, which would fall back to the version's home page
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element && event.target.closest(".md-version a[href]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    go(new URL(link.href)).then((url) => location.assign(url));
  }, true);

  // Material renders the selector after fetching versions.json; its button's accessible name ("Select version")
  // must contain the visible text (WCAG 2.5.3, label in name)
  new MutationObserver(() => {
    const button = document.querySelector(".md-version__current");
    if (button && !button.dataset.atlasLabel) {
      button.dataset.atlasLabel = "1";
      button.setAttribute("aria-label", `${button.textContent.trim()}: ${button.getAttribute("aria-label") || ""}`.trim());
    }
  }).observe(document.documentElement, { childList: true, subtree: true });

  document.addEventListener("DOMContentLoaded", () => {
    const params = new URLSearchParams(location.search);
    const key = params.get("absent");
    const note = key && document.getElementById(params.get("was") === "more" ? "atlas-absent-more" : "atlas-absent-yet");
    if (!note) return;
    note.querySelector("code").textContent = key;
    note.hidden = false;
  });
})();
