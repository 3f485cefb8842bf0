#!/usr/bin/env node
// Installed package: check the Node version first, then run the bundled CLI (built by `npm run build`).
import { existsSync, readFileSync } from "node:fs";
import module from "node:module";
import { nodeVersionProblem } from "./check-node.js";

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
// `--version` alone is answered from package.json before the CLI (commander and its commands) is
// loaded: it is what scripts and health checks run most. dist/cli/main.js answers it the same way.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${pkg.version}\n`);
  process.exit(0);
}
// A checkout or tarball that was never built has no dist/: say so instead of a module-not-found stack.
if (!existsSync(new URL("../dist/cli/main.js", import.meta.url))) {
  process.stderr.write(
    "cline-otel: dist/ is missing (this copy was never built): run `npm run build` in the checkout " +
      "(`npm start` builds it on demand; `npm run package` builds and packs).\n",
  );
  process.exit(2);
}
// V8's code cache for our modules and dependencies (in the OS temp dir, keyed by Node version and
// file contents): start-up then skips compiling them. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();
// Stack traces name src/*.ts (mapped lazily, only when one is shown: see source-maps.js).
(await import("./source-maps.js")).installSourceMappedStacks(new URL("../dist/", import.meta.url).href);
// The bundle (`npm run build`, tools/build.js): the entry, and a chunk per command loaded on demand.
await import("../dist/cli/main.js");
