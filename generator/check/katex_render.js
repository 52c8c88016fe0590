// Reads [{tex, display}] as JSON on stdin; writes [{html} | {error}] as JSON. One process for all formulas.
const katex = require("katex");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(({ tex, display }) => {
    try {
      return {
        html: katex.renderToString(tex, {
          displayMode: !!display,
          throwOnError: true,
          strict: "error",
          trust: false,
          output: "htmlAndMathml",
        }),
      };
    } catch (e) {
      return { error: String(e.message || e).replace(/\s+/g, " ") };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
