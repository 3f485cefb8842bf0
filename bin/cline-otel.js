#!/usr/bin/env node
// Installed package: check the Node version first, then run the compiled CLI (built by `npm run build`).
import { nodeVersionProblem } from "./check-node.js";

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
await import("../dist/cli/main.js");
