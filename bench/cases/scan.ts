/**
 * Case 1: message-document scan throughput. The ~70 MB document and the timing are
 * bench/scan.ts's (benchScan); a second, denser document cut the way writeCorpus cuts its
 * histories (median tool result 2.5 KB, so more messages and strings per MB) is measured
 * here the same way, as the figure that predicts the backfill.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { messagesDocumentSchema } from "../../src/adapter/cline/schema.ts";
import { scanFile } from "../../src/scan/scanner.ts";
import { makeReservoir, writeDocument } from "../lib/corpus.ts";
import { prng } from "../lib/messages-doc.ts";
import { atLeast, type CaseResult, type Row } from "../lib/report.ts";
import { fmt, interleave, MiB, median } from "../lib/stats.ts";
import { benchScan } from "../scan.ts";

export interface ScanCaseOptions {
  readonly tmp: string;
  readonly sizeMB: number;
  readonly reps: number;
}

export async function scanCase(opts: ScanCaseOptions): Promise<CaseResult> {
  const a = await benchScan({ sizeMB: opts.sizeMB, reps: opts.reps });
  const mb = a.bytes / MiB;
  const rows: Row[] = [
    {
      case: "scan",
      measure: `scanner, ${fmt(mb, 0)} MB doc (bench/scan.ts)`,
      value: `${fmt(a.scannerMs)} ms = ${fmt(a.scannerMBps, 0)} MB/s`,
      baseline: `${fmt(a.parseMs)} ms readFileSync+JSON.parse`,
      ratio: a.parseOverScanner,
      ratioOf: "JSON.parse / scanner",
      ...atLeast(a.parseOverScanner, 3),
    },
    {
      case: "scan",
      measure: "  same doc vs raw read",
      value: "",
      baseline: `${fmt(a.rawMs)} ms readFileSync`,
      ratio: a.rawOverScanner,
      ratioOf: "raw / scanner",
      ...atLeast(a.rawOverScanner, 0.5),
    },
  ];

  const dense = await denseDoc(opts);
  rows.push(
    {
      case: "scan",
      measure: `scanner, ${fmt(dense.bytes / MiB, 0)} MB corpus-shaped doc`,
      value: `${fmt(dense.scannerMs)} ms = ${fmt(dense.bytes / MiB / (dense.scannerMs / 1000), 0)} MB/s`,
      baseline: `${fmt(dense.parseMs)} ms readFileSync+JSON.parse`,
      ratio: dense.parseMs / dense.scannerMs,
      ratioOf: "JSON.parse / scanner",
      ...atLeast(dense.parseMs / dense.scannerMs, 3),
    },
    {
      case: "scan",
      measure: "  same doc vs raw read",
      value: "",
      baseline: `${fmt(dense.rawMs)} ms readFileSync`,
      ratio: dense.rawMs / dense.scannerMs,
      ratioOf: "raw / scanner",
      ...atLeast(dense.rawMs / dense.scannerMs, 0.5),
    },
  );
  return {
    name: "scan",
    rows,
    notes: [
      `scan: bench/scan.ts runs (ms) scanner ${a.samples.scanner.map((x) => fmt(x, 0)).join(" ")}; ` +
        `JSON.parse ${a.samples.parse.map((x) => fmt(x, 0)).join(" ")}; raw ${a.samples.raw.map((x) => fmt(x, 0)).join(" ")}`,
    ],
    data: { benchScan: a, dense },
  };
}

/** The denser document, measured interleaved (scanner, JSON.parse, raw per round). */
async function denseDoc(opts: ScanCaseOptions) {
  const dir = mkdtempSync(join(opts.tmp, "scan-dense-"));
  try {
    const path = join(dir, "dense.messages.json");
    const reservoir = makeReservoir(prng(5));
    const stats = writeDocument({
      path,
      sessionId: "1790000000000_dense",
      agent: "lead",
      rootId: "1790000000000_dense",
      targetBytes: opts.sizeMB * MiB,
      startTs: 1_790_000_000_000,
      seed: 5,
      reservoir,
    });
    const found = (await scanFile(path, messagesDocumentSchema)).value as { messages?: unknown[] };
    if (found.messages?.length !== stats.messages) {
      throw new Error(`dense doc: scanned ${found.messages?.length} messages, wrote ${stats.messages}`);
    }
    const s = await interleave(
      {
        scanner: () => scanFile(path, messagesDocumentSchema),
        parse: () => JSON.parse(readFileSync(path, "utf8")),
        raw: () => readFileSync(path),
      },
      { reps: opts.reps, warmup: 3 },
    );
    return {
      bytes: stats.bytes,
      messages: stats.messages,
      scannerMs: median(s.scanner),
      parseMs: median(s.parse),
      rawMs: median(s.raw),
      samples: s,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
