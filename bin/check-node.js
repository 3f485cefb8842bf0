// The oldest Node cline-otel runs on. It must match package.json "engines" (a test checks) and is kept
// here as plain JavaScript so the check runs before anything that needs a newer Node is loaded:
// better-sqlite3 13 segfaults on Node 20 instead of failing with a message.
export const MIN_NODE = "22.15.0";

/** @param {string} version e.g. process.versions.node @returns {string | undefined} */
export function nodeVersionProblem(version, min = MIN_NODE) {
  const have = version.split(".").map((n) => Number.parseInt(n, 10));
  const want = min.split(".").map((n) => Number.parseInt(n, 10));
  for (let i = 0; i < 3; i++) {
    const h = have[i] ?? 0;
    const w = want[i] ?? 0;
    if (Number.isNaN(h)) break;
    if (h > w) return undefined;
    if (h < w) {
      return `cline-otel needs Node >= ${min} (Node 22 or 24 LTS); this is Node ${version} (${process.execPath}). Install Node 22 or 24 and run it again.`;
    }
  }
  return undefined;
}
