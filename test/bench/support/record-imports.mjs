// Loaded with `node --import` into a CLI process under test: records every module URL the
// process resolves and, at exit, writes them one per line to $CLINE_OTEL_IMPORTS_OUT, with the
// public builtins Node loaded however they were asked for (an import, require, or
// process.getBuiltinModule, as the bundle does for commander's node:child_process) as `node:<id>`.
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
  for (const m of process.moduleLoadList) {
    const id = /^NativeModule ([^/]+)$/.exec(m)?.[1];
    if (id !== undefined && !id.startsWith("internal")) seen.add(`node:${id}`);
  }
  if (out) writeFileSync(out, `${[...seen].join("\n")}\n`);
});
