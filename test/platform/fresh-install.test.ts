/**
 * A new user's machine (issue 21): an empty HOME, no npm configuration but the repo's own .npmrc, the
 * npm registry only. `.ci/fresh-install` copies this checkout, runs `npm ci` (failing on node-gyp, a
 * compiled addon or any `npm warn` line), the README's `npm start`, and the packed install's
 * `cline-otel report`. Run here under the Node of this test run, with the npm that Node ships and
 * with npm 12; CI runs the suite under Node 22 (npm 10) and Node 24 (npm 11), npm 12 under Node 24 only
 * (CLINE_OTEL_RERECORD=once-elsewhere under Node 22: npm 12 is the same npm whichever Node runs it, and
 * the addon it must not compile is checked with each Node's own npm).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.ts";

const node = process.versions.node.split(".")[0] ?? "";

function freshInstall(npm: string | undefined) {
  const args = [join(ROOT, ".ci/fresh-install"), node, ...(npm === undefined ? [] : [npm])];
  return spawnSync("bash", args, { encoding: "utf8", timeout: 280_000 });
}

const NPMS: [string, string | undefined][] = [
  ["the npm this Node ships", undefined],
  ...(process.env.CLINE_OTEL_RERECORD === "once-elsewhere" ? [] : [["npm 12", "12"] as [string, string]]),
];

describe("a fresh machine", () => {
  it.each(NPMS)(
    "npm ci, npm start and the packed install work with %s, nothing compiled",
    (_name, npm) => {
      const r = freshInstall(npm);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(
        /^fresh-install: node v\d+.*: npm ci \d+s, nothing compiled, no warning; .*: ok$/m,
      );
    },
    300_000,
  );
});
