/**
 * A full-mode capture with a 300 MB payload (CLINE_CAPTURE_MAX_PREVIEW_BYTES set high) is
 * scanned in chunks: the payload is skipped as bytes, the summary found and exact, and the
 * process's peak memory barely moves. A control that reads the file whole shows the
 * measurement sees a whole-file read.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../../helpers/cli.ts";
import { captureFileName, captureRecord } from "./helpers.ts";

const MB = 1024 * 1024;
let dir = "";
let caps = "";
let bytes = 0;

/** Writes `{ …summary…, "payload": {messages: [<huge texts>]}, "attempt": 2 }` without holding it. */
function writeHuge(path: string, payloadMb: number): number {
  const rec = captureRecord({ payloadBytes: 123_456_789, iteration: 7, roleCounts: { system: 1, user: 40 } });
  const { attempt: _a, ...head } = rec;
  const headJson = JSON.stringify(head);
  const fd = openSync(path, "w", 0o600);
  try {
    writeSync(fd, `${headJson.slice(0, -1)},"payload":{"system":"s","messages":[`);
    // JSON-escaped text: quotes, backslashes, unicode escapes, as real tool output has.
    const unit = 'tool output \\"quoted\\" C:\\\\path \\u00e9\\n{\\"k\\": [1,2]} ';
    const piece = unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
    for (let i = 0; i < payloadMb; i++) {
      writeSync(fd, `${i === 0 ? "" : ","}{"role":"user","content":[{"type":"text","text":"${piece}"}]}`);
    }
    writeSync(fd, `]},"attempt":2}\n`);
  } finally {
    closeSync(fd);
  }
  return statSync(path).size;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cap-huge-"));
  caps = join(dir, "caps");
  mkdirSync(caps);
  bytes = writeHuge(join(caps, captureFileName("cap_run_huge_7_0123456789abcdef", "ai_sdk_prompt", 1)), 300);
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function child(mode: "" | "whole") {
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "test/adapter/cline/captures/huge-child.ts"),
      join(dir, "home"),
      caps,
      join(dir, `state-${mode || "scan"}`),
      mode,
    ],
    { cwd: ROOT, encoding: "utf8", timeout: 180_000, maxBuffer: 16 * MB },
  );
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as {
    beforeKb: number;
    afterKb: number;
    held: number;
    rows: {
      payloadBytes: number;
      estimatedTokens: number;
      attempt: number;
      iteration: number;
      roleUser: number;
    }[];
  };
}

describe("a 300 MB full-mode capture", () => {
  it("is larger than 300 MB", () => {
    expect(bytes).toBeGreaterThan(300 * MB);
  });

  it("is collected exactly, with peak memory growing by far less than the file", () => {
    const r = child("");
    expect(r.rows).toHaveLength(1);
    // Fields before AND after the payload are found: the whole file was crossed.
    expect(r.rows[0]).toMatchObject({
      payloadBytes: 123_456_789,
      estimatedTokens: Math.ceil(123_456_789 / 3),
      iteration: 7,
      roleUser: 40,
      attempt: 2,
    });
    const growthMb = (r.afterKb - r.beforeKb) / 1024;
    process.stdout.write(
      `huge capture: ${(bytes / MB).toFixed(0)} MB scanned, peak RSS +${growthMb.toFixed(1)} MB\n`,
    );
    expect(growthMb).toBeLessThan(64);
  }, 180_000);

  it("control: reading the file whole grows peak memory by about its size", () => {
    const r = child("whole");
    expect(r.held).toBe(bytes);
    expect((r.afterKb - r.beforeKb) / 1024).toBeGreaterThan(250);
  }, 180_000);
});
