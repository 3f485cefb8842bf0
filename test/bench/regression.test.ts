/**
 * CI speed regression check: RATIOS measured in the same process, interleaved, medians of
 * several rounds, with generous margins. Never absolute times: the machine may be loaded.
 *   - scanner vs readFileSync + JSON.parse on a ~16 MB messages document (benchmark case 1)
 *   - idle pass vs a bare readdir + stat walk over 1,000 sessions (benchmark case 3)
 * The full benchmark is `npm run bench` (docs/performance.md).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { measureIdle } from "../../bench/cases/idle.ts";
import { type Corpus, writeCorpus } from "../../bench/lib/corpus.ts";
import { writeMessagesDoc } from "../../bench/lib/messages-doc.ts";
import { interleave, median } from "../../bench/lib/stats.ts";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";
import { scanFile } from "../../src/scan/scanner.ts";

/** Margins: the full benchmark's targets are 3x and 2x. */
const MIN_PARSE_OVER_SCAN = 1.5;
const MAX_IDLE_OVER_WALK = 4;

let dir = "";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bench-regression-"));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("relative speed", () => {
  it(`scans a 16 MB document at least ${MIN_PARSE_OVER_SCAN}x faster than JSON.parse`, async () => {
    const path = join(dir, "doc.messages.json");
    // The benchmark's case-1 shape: mostly 15 KB tool results, every 50th a 600 KB one.
    const { expected } = writeMessagesDoc(path, {
      turns: 540,
      toolResultChars: (t) => (t % 50 === 0 ? 600_000 : 15_000),
      seed: 7,
    });
    const scanned = (await scanFile(path, messagesDocumentSchema)).value as { messages?: unknown[] };
    expect(scanned.messages).toHaveLength(expected.messages.length);
    const s = await interleave(
      {
        scanner: () => scanFile(path, messagesDocumentSchema),
        parse: () => JSON.parse(readFileSync(path, "utf8")),
      },
      { reps: 7, warmup: 3 },
    );
    const ratio = median(s.parse) / median(s.scanner);
    console.log(
      `JSON.parse / scanner = ${ratio.toFixed(2)} (scanner ${median(s.scanner).toFixed(1)} ms, ` +
        `JSON.parse ${median(s.parse).toFixed(1)} ms; minimum ${MIN_PARSE_OVER_SCAN})`,
    );
    expect(ratio).toBeGreaterThanOrEqual(MIN_PARSE_OVER_SCAN);
  }, 60_000);

  it(`notices nothing changed in 1,000 sessions within ${MAX_IDLE_OVER_WALK}x a readdir+stat walk`, async () => {
    const corpus: Corpus = writeCorpus(join(dir, "home"), {
      sessions: 1000,
      totalBytes: 1000 * 6 * 1024,
      sizeSigma: 0.8,
      subagentShare: 0.1,
      seed: 11,
    });
    // Checkpoints are seeded rather than collected: the full collection is the benchmark's job.
    const m = await measureIdle(corpus, dir, { reps: 7, changedReps: 1, fill: "checkpoints" });
    const ratio = median(m.idlePass) / median(m.statWalk);
    console.log(
      `idle pass / stat walk = ${ratio.toFixed(2)} over ${m.documents} documents (pass ${median(m.idlePass).toFixed(1)} ms, ` +
        `discovery ${median(m.discoverOnly).toFixed(1)} ms, walk ${median(m.statWalk).toFixed(1)} ms; maximum ${MAX_IDLE_OVER_WALK})`,
    );
    expect(ratio).toBeLessThanOrEqual(MAX_IDLE_OVER_WALK);
  }, 60_000);
});
