// Reads [tex] (display formulas) as JSON on stdin; writes [{svg} | {error}] as JSON: each formula as one
// self-contained SVG of paths (its glyphs defined once inside it), for the cheat-sheet PDFs. One process for all.
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { SVG } = require("mathjax-full/js/output/svg.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AllPackages } = require("mathjax-full/js/input/tex/AllPackages.js");

const adaptor = liteAdaptor();
RegisterHTMLHandler(adaptor);
const packages = AllPackages.filter((name) => !["autoload", "require", "bussproofs"].includes(name));
const tex = new TeX({ packages, formatError: (jax, err) => { throw err; } });
const doc = mathjax.document("", { InputJax: tex, OutputJax: new SVG({ fontCache: "local" }) });

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((source) => {
    try {
      return { svg: adaptor.innerHTML(doc.convert(source, { display: true })) };
    } catch (e) {
      return { error: String(e.message || e).replace(/\s+/g, " ") };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
