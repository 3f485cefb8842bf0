/**
 * The write side of the GenAI histogram series (src/ledger/genai.ts): the observations of a
 * commit transaction are written once, at its end, in it; one that fails leaves nothing behind,
 * not even in memory for the next transaction.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { GenaiSeriesRow, Signals } from "../../src/ledger/signals.ts";
import { assistant, LEAD_PATH, leadDoc, messagesDoc, observe, prompt, ROOT } from "../helpers/signal-docs.ts";

const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(): { l: Ledger; s: Signals } {
  const d = mkdtempSync(join(tmpdir(), "genai-writes-"));
  dirs.push(d);
  const l = Ledger.open(d);
  ledgers.push(l);
  return { l, s: l.signals as Signals };
}

/** The series without the ingestion times (which differ between two ledgers). */
const shape = (rows: readonly GenaiSeriesRow[]) =>
  rows
    .map(({ firstMs, updatedMs, ...r }) => r)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** A second document of the same session (another agent's file): it adds to the same series. */
function secondDoc() {
  const t0 = 1_796_018_300_000;
  return messagesDoc([prompt("v1", t0), assistant("msg_b1", t0 + 900)], "lead", ROOT);
}

describe("GenAI series writes", () => {
  it("a batch of sources writes the same series as one commit per source", () => {
    const batched = open();
    const single = open();
    const a = observe(leadDoc().doc, LEAD_PATH, 100);
    const b = observe(secondDoc(), `/s/${ROOT}/other.messages.json`, 100);
    batched.l.commitAll([a, b]);
    single.l.commit(a);
    single.l.commit(b);
    const got = shape(batched.s.genaiSeries());
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(shape(single.s.genaiSeries()));
    // Both documents' requests are in the one token-usage series of the session.
    const output = got.find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(output?.count).toBe(a.events.length + b.events.length);
  });

  it("a failed transaction's observations never reach the next one", () => {
    const { l, s } = open();
    const a = observe(leadDoc().doc, LEAD_PATH, 100);
    const b = observe(secondDoc(), `/s/${ROOT}/other.messages.json`, 100);
    // The second source's checkpoint is refused after the first source's rows were written.
    const broken = { ...b, checkpoint: { ...b.checkpoint, size: null as unknown as number } };
    expect(() => l.commitAll([a, broken])).toThrow();
    expect(s.genaiSeries()).toEqual([]);
    l.commit(b);
    const output = s.genaiSeries().find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(output?.count).toBe(b.events.length);
    // Nor into a quiet-time sweep, which writes the series of what it finalizes.
    expect(() => l.commitAll([a, broken])).toThrow();
    s.finalizeQuiet(Date.now() + 10 ** 12, 1);
    const after = s.genaiSeries().find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(after?.count).toBe(b.events.length);
  });
});
