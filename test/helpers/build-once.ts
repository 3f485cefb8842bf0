/**
 * Vitest global setup: the tests that spawn the CLI run what users run, the bundle in dist/
 * (bin/cline-otel.js), so it is built here once per test run when a source, tsconfig.json,
 * package.json or tools/build.js is newer than it (CI: `npm ci` built it through "prepare").
 */
import { build, buildIsStale } from "../../tools/build.js";

export async function setup(): Promise<void> {
  if (!buildIsStale()) return;
  if ((await build({ quiet: true })) !== 0) {
    throw new Error("the CLI bundle could not be built (see above): run `npm run build`");
  }
}
