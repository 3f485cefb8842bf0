/**
 * The task adapter's gate (unchangedNow) may use the stat its discovery found a source by, but
 * only in the synchronous stretch right after that discovery: a later pass (the loop reuses a
 * discovery) always stats again, so a rewrite after the discovery is never missed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import { checkpointOf, statFile } from "../../../src/adapter/fingerprint.ts";
import { settledRequests, writeTask } from "./helpers.ts";

let work: string | undefined;
afterEach(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

describe("the task adapter's gate", () => {
  it("answers from discovery's stat only right after it; a rewrite after that is seen", async () => {
    work = mkdtempSync(join(tmpdir(), "tasks-gate-"));
    const data = join(work, "data");
    const path = writeTask(data, "1796000000001", settledRequests(1));
    const adapter = createClineTasksAdapter([{ path: data, client: "cli", product: "t", foundBy: "t" }]);
    const cp = checkpointOf(path, statFile(path));
    const first = await adapter.discover();
    const source = first.sources[0];
    if (source === undefined) throw new Error("no source");
    expect(adapter.unchangedNow?.(source, cp)).toBe(true);
    await new Promise((r) => setImmediate(r));
    // Rewritten (a new inode) after the discovery: the next gate must not answer from its stat.
    writeTask(data, "1796000000001", settledRequests(1));
    expect(adapter.unchangedNow?.(source, cp)).toBe(false);
    // Within the stretch after a new discovery: its own (new) stat, so "changed" against cp too.
    await adapter.discover();
    expect(adapter.unchangedNow?.(source, cp)).toBe(false);
    expect(adapter.unchangedNow?.(source, checkpointOf(path, statFile(path)))).toBe(true);
  });
});
