/**
 * The daemon's watcher reports a compaction file appearing in a session folder, so the
 * compaction is recorded within a pass, not at the next safety-net sweep (which would make
 * "two compactions between two reads" far likelier).
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clineWatchPlan } from "../../../../src/adapter/cline/watch-plan.ts";
import { DirWatcher, type WatchEvent } from "../../../../src/collector/watch.ts";
import { silentLogger } from "../../../../src/util/log.ts";

const work = mkdtempSync(join(tmpdir(), "compaction-watch-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("DirWatcher and compaction files", () => {
  it("an atomically written <id>.compaction.json is an event naming it", async () => {
    const sessions = join(work, "sessions");
    const dir = join(sessions, "1_a");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "1_a.messages.json"), "{}");
    const events: WatchEvent[] = [];
    const at = (path: string) => ({ path, origin: "flag" as const, via: "test" });
    const plan = clineWatchPlan(
      { root: at(work), data: at(work), sessions: at(sessions), db: at(join(work, "db")) },
      [],
    );
    const w = new DirWatcher({
      plans: [plan],
      logger: silentLogger,
      onChange: (e) => events.push(e),
    });
    try {
      w.refresh([dir]);
      expect(w.covers(dir)).toBe(true);
      // Cline writes tmp + rename; the tmp name itself is not relevant.
      writeFileSync(join(dir, "1_a.compaction.json.tmp-1"), "{}");
      renameSync(join(dir, "1_a.compaction.json.tmp-1"), join(dir, "1_a.compaction.json"));
      const deadline = Date.now() + 5000;
      while (!events.some((e) => e.path?.endsWith("1_a.compaction.json")) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      // A rename naming the file: the loop discovers when no discovery listed it yet (a first
      // compaction), and re-reads only it when one did (test/collector/rename.test.ts).
      expect(events.find((e) => e.path === join(dir, "1_a.compaction.json"))).toMatchObject({
        renamed: true,
      });
      expect(events.some((e) => e.path?.endsWith(".tmp-1"))).toBe(false);
    } finally {
      w.close();
    }
  });
});
