/**
 * The ledger's file edits (src/ledger/delivered/edits.ts): stored once by key in the document's transaction
 * with their series; an edit an adapter got wrong (a negative or fractional count, an unknown
 * decision) is skipped and reported, and the rest of its document still commits; a failed commit
 * stores no edit and no series.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { EditRecord } from "../../src/adapter/types.ts";
import { type TempLedger, tempLedger } from "../export/helpers/ledger.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";

let t: TempLedger | undefined;
afterEach(() => {
  t?.dispose();
  t = undefined;
});

describe("ledger edits", () => {
  it("an invalid edit is skipped and reported; the document and its other edits commit", () => {
    t = tempLedger();
    const paid = event("m1", { toolCallCount: 1 });
    const c = call("c1", paid.dedupKey, 1, { toolName: "editor" });
    const bad = [
      edit(c, { linesAdded: -1 }, 1),
      edit(c, { linesRemoved: 1.5 }, 2),
      edit(c, { decision: "maybe" as EditRecord["decision"] }, 3),
    ];
    const r = t.ledger.commit(withEdits(finalObservation([paid], [c]), [edit(c), ...bad]));
    expect(r.eventsAdded).toBe(1);
    expect(r.editsAdded).toBe(1);
    expect(r.editsInvalid?.map((x) => x.editKey)).toEqual(bad.map((e) => e.editKey));
    expect(t.ledger.edits.rows()).toHaveLength(1);
    expect(t.ledger.edits.series().map((s) => s.edits)).toEqual([1]);
  });

  it("a failed commit stores no edit, no series and no signal record", () => {
    t = tempLedger();
    const paid = event("m1", { toolCallCount: 1 });
    const c = call("c1", paid.dedupKey, 1, { toolName: "editor" });
    // An event whose total breaks the schema's CHECK fails the whole transaction, after the edits' inserts.
    const broken = event("m2", { total: 1 });
    expect(() => t?.ledger.commit(withEdits(finalObservation([paid, broken], [c]), [edit(c)]))).toThrow();
    expect(t.ledger.edits.rows()).toEqual([]);
    expect(t.ledger.edits.series()).toEqual([]);
    expect(t.ledger.signals?.queued().edit).toBe(0);
    // Read again, whole: counted once.
    expect(t.ledger.commit(withEdits(finalObservation([paid], [c]), [edit(c)])).editsAdded).toBe(1);
    expect(t.ledger.signals?.queued().edit).toBe(1);
  });
});
