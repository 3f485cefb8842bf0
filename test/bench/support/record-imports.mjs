// Loaded with `node --import` into a CLI process under test: records every module URL the
// process resolves and, at exit, writes them one per line to $CLINE_OTEL_IMPORTS_OUT.
import { writeFileSync } from "node:fs";
import { registerHooks } from "node:module";

const out = process.env.CLINE_OTEL_IMPORTS_OUT;
const seen = new Set();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const r = nextResolve(specifier, context);
    seen.add(r.url);
    return r;
  },
});
process.on("exit", () => {
  if (out) writeFileSync(out, `${[...seen].join("\n")}\n`);
});
