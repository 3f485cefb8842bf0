/**
 * Child process for the huge-capture test: peak RSS (process.resourceUsage().maxRSS) before and
 * after collecting a capture dir. argv: <home> <captureDir> <stateDir> [whole]
 * `whole` is the control: it reads the capture files into memory instead.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createClineSurfaces } from "../../../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";

const [home, captureDir, stateDir, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
const cline = resolveClinePaths({}, {}, home);
const ledger = Ledger.open(stateDir);
const adapter = createClineSurfaces(cline, resolveCaptureDirs({ captureDir }, {}, cline));
// Warm up everything the pass loads (modules, wasm, statements) on an empty discovery first.
await adapter.discover();
const beforeKb = process.resourceUsage().maxRSS;
let held = 0;
if (mode === "whole") {
  for (const f of readdirSync(captureDir)) held += readFileSync(join(captureDir, f)).length;
} else {
  await runPass(adapter, ledger);
}
const afterKb = process.resourceUsage().maxRSS;
process.stdout.write(`${JSON.stringify({ beforeKb, afterKb, held, rows: ledger.captureRows() })}\n`);
ledger.close();
