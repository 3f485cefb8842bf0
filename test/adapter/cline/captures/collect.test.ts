import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createClineCapturesAdapter,
  createClineSurfaces,
  scanOptionsFor,
} from "../../../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import type { Adapter } from "../../../../src/adapter/types.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { treeFingerprint } from "../../../helpers/tree-hash.ts";
import { captureDirOf, expectedCaptures, FIXTURES, homeOf, writeCapture } from "./helpers.ts";

let dir: string;
let ledger: Ledger;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cap-collect-"));
  ledger = Ledger.open(join(dir, "state"));
});
afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

function surfacesFor(home: string, captureDir: string): Adapter {
  const cline = resolveClinePaths({}, {}, home);
  return createClineSurfaces(cline, resolveCaptureDirs({ captureDir }, {}, cline));
}

function capturesOnly(captureDir: string, home = join(dir, "home")): Adapter {
  const cline = resolveClinePaths({}, {}, home);
  return createClineCapturesAdapter({
    dirs: [{ path: captureDir, origin: "flag", via: "t" }],
    cline,
  });
}

describe("the real CLI's captures, collected next to its messages", () => {
  for (const scenario of ["captures", "captures-full"]) {
    it(`${scenario}: one ledger row per file, with the file's numbers, joined to the session's project`, async () => {
      const before = treeFingerprint(join(FIXTURES, scenario));
      const pass = await runPass(surfacesFor(homeOf(scenario), captureDirOf(scenario)), ledger);
      expect(pass.failed).toBe(0);
      expect(pass.problems).toEqual([]);
      // The messages surface still does its part: 3 responses with usage.
      expect(pass.eventsAdded).toBe(3);
      const want = expectedCaptures(scenario);
      const rows = ledger.captureRows();
      expect(rows).toHaveLength(want.length);
      for (const w of want) {
        const row = rows.find((r) => r.captureKey === `cline-capture|${w.captureId}|${w.stage}|${w.seq}`);
        expect(row).toMatchObject({
          stage: w.stage,
          sessionId: w.sessionId,
          agentId: w.agentId,
          agent: "lead",
          runId: w.runId,
          iteration: w.iteration,
          model: w.model,
          provider: w.provider,
          attempt: w.attempt,
          mode: w.mode,
          payloadBytes: w.payloadBytes,
          estimatedTokens: w.estimatedTokens,
          messageCount: w.messageCount,
          messageTokens: w.messageTokens,
          toolResults: w.toolResults,
          reasoningBlocks: w.reasoningBlocks,
          tsMs: w.timestampMs,
          project: `/tmp/cline-otel-fixture/${scenario}/ws`,
        });
      }
      // Read-only: nothing under the fixture changed.
      expect(treeFingerprint(join(FIXTURES, scenario))).toEqual(before);
    });
  }

  it("series totals are exactly the sums of the rows, per stage", async () => {
    await runPass(surfacesFor(homeOf("captures"), captureDirOf("captures")), ledger);
    const want = expectedCaptures("captures");
    for (const stage of ["ai_sdk_prompt", "wire_request"]) {
      const mine = want.filter((w) => w.stage === stage);
      const s = ledger.captureSeries().find((r) => r.stage === stage);
      expect(s).toMatchObject({
        captures: mine.length,
        retries: 0,
        payloadBytes: mine.reduce((a, w) => a + w.payloadBytes, 0),
        estimatedTokens: mine.reduce((a, w) => a + w.estimatedTokens, 0),
        payloadMin: Math.min(...mine.map((w) => w.payloadBytes)),
        tokensMax: Math.max(...mine.map((w) => w.estimatedTokens)),
        messages: mine.reduce((a, w) => a + w.messageCount, 0),
        toolResults: mine.reduce((a, w) => a + w.toolResults, 0),
      });
      expect(s?.payloadBuckets.reduce((a, b) => a + b, 0)).toBe(mine.length);
    }
  });
});

describe("read once, never twice", () => {
  it("a second pass opens nothing; re-reading after losing the checkpoints adds nothing", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    for (let i = 1; i <= 3; i++) {
      writeCapture(caps, `cap_run_x_${i}_0123456789abcdef`, 1, { iteration: i, payloadBytes: 1000 * i });
      writeCapture(caps, `cap_run_x_${i}_0123456789abcdef`, 1, { iteration: i, stage: "wire_request" });
    }
    const a = await runPass(capturesOnly(caps), ledger);
    expect(a).toMatchObject({ sources: 6, read: 6, unchanged: 0, failed: 0 });
    expect(ledger.captureRows()).toHaveLength(6);
    const b = await runPass(capturesOnly(caps), ledger);
    expect(b).toMatchObject({ sources: 6, read: 0, unchanged: 6 });
    // Lose every checkpoint (e.g. a capture dir that moved): everything is read again, nothing doubles.
    expect(ledger.pruneCheckpoints("cline-capture", new Set(), [])).toBe(6);
    const c = await runPass(capturesOnly(caps), ledger);
    expect(c).toMatchObject({ read: 6 });
    expect(ledger.captureRows()).toHaveLength(6);
    expect(ledger.captureSeries().reduce((n, s) => n + s.captures, 0)).toBe(6);
  });

  it("the same file seen through two capture dirs counts once", async () => {
    const caps = join(dir, "caps");
    const copy = join(dir, "copy");
    mkdirSync(caps);
    writeCapture(caps, "cap_a", 1);
    cpSync(caps, copy, { recursive: true });
    const cline = resolveClinePaths({}, {}, join(dir, "home"));
    const adapter = createClineCapturesAdapter({
      dirs: [
        { path: caps, origin: "flag", via: "a" },
        { path: copy, origin: "env", via: "b" },
      ],
      cline,
    });
    const r = await runPass(adapter, ledger);
    expect(r).toMatchObject({ sources: 2, read: 2 });
    expect(ledger.captureRows()).toHaveLength(1);
  });
});

describe("Cline deletes captures whenever it likes", () => {
  it("a file deleted between discovery and read is counted, not a failure, and its checkpoint is pruned", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    const keep = writeCapture(caps, "cap_keep", 1);
    const gone = writeCapture(caps, "cap_gone", 1);
    const inner = capturesOnly(caps);
    const deleting: Adapter = {
      ...inner,
      async discover() {
        const d = await inner.discover();
        unlinkSync(gone); // Cline's 24-hour cleanup, right after our listing
        return d;
      },
    };
    const r = await runPass(deleting, ledger);
    expect(r).toMatchObject({ sources: 2, failed: 0, failedPaths: [] });
    expect(r.problems.map((p) => [p.code, p.path])).toEqual([["capture-vanished", gone]]);
    expect(ledger.captureRows().map((x) => x.captureKey)).toEqual(["cline-capture|cap_keep|ai_sdk_prompt|1"]);
    expect(ledger.getCheckpoint(gone)).toBeDefined();
    // Next pass: the file is not listed, its checkpoint goes; the other one stays.
    const next = await runPass(capturesOnly(caps), ledger);
    expect(next).toMatchObject({ sources: 1, unchanged: 1, problems: [] });
    expect(ledger.getCheckpoint(gone)).toBeUndefined();
    expect(ledger.getCheckpoint(keep)).toBeDefined();
    // Everything deleted, even the directory: all checkpoints go, nothing fails, the rows stay.
    rmSync(caps, { recursive: true });
    const empty = await runPass(capturesOnly(caps), ledger);
    expect(empty).toMatchObject({ sources: 0, failed: 0, problems: [] });
    expect(ledger.getCheckpoint(keep)).toBeUndefined();
    expect(ledger.captureRows()).toHaveLength(1);
  });

  it("we never delete a capture ourselves", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    for (let i = 1; i <= 4; i++) writeCapture(caps, `cap_${i}`, 1);
    await runPass(capturesOnly(caps), ledger);
    await runPass(capturesOnly(caps), ledger);
    expect(readdirSync(caps)).toHaveLength(4);
  });

  it("checkpoints under a dir that could not be listed are kept", () => {
    const p = join(dir, "caps", "cap_a.ai_sdk_prompt.1.provider-request.json");
    ledger.commit({
      status: "read",
      source: { adapterId: "cline-capture", path: p, origin: "walk", hint: {} },
      checkpoint: { path: p, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
      events: [],
      toolCalls: [],
      captures: [],
      problems: [],
    });
    expect(ledger.pruneCheckpoints("cline-capture", new Set(), [join(dir, "caps")])).toBe(0);
    expect(ledger.pruneCheckpoints("cline", new Set(), [])).toBe(0); // other adapters' are never touched
    expect(ledger.pruneCheckpoints("cline-capture", new Set(), [join(dir, "ca")])).toBe(1);
  });
});

describe("edge cases", () => {
  it("a capture directory that does not exist: no sources, no problems; it is picked up once it appears", async () => {
    const caps = join(dir, "later");
    const r = await runPass(capturesOnly(caps), ledger);
    expect(r).toMatchObject({ sources: 0, read: 0, failed: 0, problems: [] });
    mkdirSync(caps);
    writeCapture(caps, "cap_a", 1);
    const again = await runPass(capturesOnly(caps), ledger);
    expect(again).toMatchObject({ sources: 1, read: 1 });
    expect(existsSync(join(dir, "home"))).toBe(false); // nothing of Cline's was created
  });

  it("*.tmp files (not yet renamed into place) are never read", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeFileSync(join(caps, "cap_a.ai_sdk_prompt.1.provider-request.json.tmp"), '{"summary":');
    const r = await runPass(capturesOnly(caps), ledger);
    expect(r).toMatchObject({ sources: 0, problems: [] });
  });

  it("a malformed capture is reported once and not retried (captures are immutable)", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeFileSync(
      join(caps, "cap_bad.ai_sdk_prompt.1.provider-request.json"),
      '{"summary": {"payloadBytes": 1',
    );
    const r = await runPass(capturesOnly(caps), ledger);
    expect(r).toMatchObject({ failed: 0, read: 1 });
    expect(r.problems.map((p) => p.code)).toEqual(["malformed-capture"]);
    const again = await runPass(capturesOnly(caps), ledger);
    expect(again).toMatchObject({ unchanged: 1, problems: [] });
    expect(ledger.captureRows()).toEqual([]);
  });

  it("retries: attempt > 1 is kept, counted in the series", async () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeCapture(caps, "cap_r", 1, { stage: "wire_request" });
    writeCapture(caps, "cap_r", 2, { stage: "wire_request", attempt: 2 });
    await runPass(capturesOnly(caps), ledger);
    expect(ledger.captureRows().map((r) => [r.seq, r.attempt])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(ledger.captureSeries()[0]).toMatchObject({ captures: 2, retries: 1 });
  });

  it("small captures are scanned with a small buffer, large ones with the chunked default", () => {
    const small = writeCapture(dir, "cap_small", 1);
    const large = join(dir, "large.json");
    writeFileSync(large, Buffer.alloc(1024 * 1024 + 1, 0x20));
    expect(scanOptionsFor(small)).toEqual({ chunkBytes: 65536, skipper: "indexOf" });
    expect(scanOptionsFor(large)).toEqual({});
    expect(scanOptionsFor(join(dir, "missing"))).toEqual({});
  });
});
