/**
 * An edit kept once by its call's row (src/ledger/delivered/call-edit-sums.ts): which of a call's
 * edits are new against what its row holds, the sums with them added, and the stored form.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addCallEdits,
  type CallEditSums,
  decodeCallEditSums,
  encodeCallEditSums,
  placeOf,
} from "../../../src/ledger/delivered/call-edit-sums.ts";
import { call, edit, event } from "../../helpers/events.ts";

const paid = event("m1", { toolCallCount: 1 });
const c = call("c1", paid.dedupKey, 1);
/** The sums of an accepted (5/1), a rejected (2/9) and an inexact failed (1/0) edit at places 0, 1, 12. */
const THREE: CallEditSums = {
  linesAdded: 8,
  linesRemoved: 10,
  exact: 0,
  accepted: 1,
  rejected: 1,
  failed: 1,
  places: ["0", "1", "12"],
};

describe("an edit kept once by its call's row", () => {
  it("an edit's place is its key's digits after the call key, as written (01 is not 1)", () => {
    expect(placeOf(edit(c, {}, 0))).toBe("0");
    expect(placeOf({ ...edit(c), editKey: `${c.callKey}|01` })).toBe("01");
    // A call key that itself ends in `|<digits>` (the task format's): only the last part is the place.
    const t = call("c1|7", paid.dedupKey, 1);
    expect(placeOf(edit(t, {}, 12))).toBe("12");
  });

  it("a call with nothing stored: every edit is new once, the first of two equal keys wins", () => {
    const a = edit(c, { linesAdded: 5, linesRemoved: 1 }, 0);
    const b = edit(c, { linesAdded: 2, linesRemoved: 9, decision: "rejected" }, 1);
    const again = edit(c, { linesAdded: 99, linesRemoved: 99, decision: "failed" }, 0);
    const f = edit(c, { linesAdded: 1, linesRemoved: 0, exact: false, decision: "failed" }, 12);
    const r = addCallEdits(undefined, [a, b, again, f]);
    expect(r.fresh).toEqual([a, b, f]);
    expect(r.sums).toEqual(THREE);
  });

  it("a call's row holding some: only the others are new, added to its sums; none new leaves them", () => {
    const stored: CallEditSums = {
      linesAdded: 40,
      linesRemoved: 3,
      exact: 1,
      accepted: 1,
      rejected: 0,
      failed: 0,
      places: ["0"],
    };
    const old = edit(c, { linesAdded: 40, linesRemoved: 3 }, 0);
    const grown = [old, edit(c, { linesAdded: 100, linesRemoved: 0 }, 20), edit(c, { linesAdded: 101 }, 21)];
    const r = addCallEdits(stored, grown);
    expect(r.fresh.map(placeOf)).toEqual(["20", "21"]);
    expect(r.sums).toEqual({
      ...stored,
      linesAdded: 241,
      linesRemoved: 6,
      accepted: 3,
      places: ["0", "20", "21"],
    });
    const none = addCallEdits(r.sums, grown);
    expect(none.fresh).toEqual([]);
    expect(none.sums).toBe(r.sums);
  });

  it("reading a call's edits in any split adds each once: the sums equal one read of them all", () => {
    const arb = fc.array(
      fc.record({
        n: fc.nat(6),
        added: fc.nat(50),
        removed: fc.nat(50),
        exact: fc.boolean(),
        decision: fc.constantFrom("accepted" as const, "rejected" as const, "failed" as const),
      }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(arb, fc.array(fc.nat(12), { maxLength: 4 }), (specs, cuts) => {
        const edits = specs.map((s) =>
          edit(
            c,
            { linesAdded: s.added, linesRemoved: s.removed, exact: s.exact, decision: s.decision },
            s.n,
          ),
        );
        const once = addCallEdits(undefined, edits);
        // The document read again and again, each read seeing a longer prefix of the same edits.
        let sums: CallEditSums | undefined;
        const stored: typeof edits = [];
        for (const cut of [...cuts.sort((x, y) => x - y), edits.length]) {
          const r = addCallEdits(sums, edits.slice(0, cut));
          stored.push(...r.fresh);
          sums = r.sums;
        }
        expect(stored).toEqual(once.fresh);
        expect(sums === undefined ? undefined : { ...sums, places: [...sums.places].sort() }).toEqual(
          once.sums === undefined ? undefined : { ...once.sums, places: [...once.sums.places].sort() },
        );
      }),
      { numRuns: 300 },
    );
  });

  it("the stored form reads back as written; a value this build did not write is refused", () => {
    const s = THREE;
    expect(encodeCallEditSums(s)).toBe('[8,10,0,1,1,1,["0","1","12"]]');
    expect(decodeCallEditSums(encodeCallEditSums(s))).toEqual(s);
    expect(() => decodeCallEditSums("[8,10,0,1,1,1]")).toThrow(/places/);
    expect(() => decodeCallEditSums('[8,-1,0,1,1,1,["0"]]')).toThrow(/lines_removed/);
    expect(() => decodeCallEditSums('[8,1,2,1,1,1,["0"]]')).toThrow(/exact/);
    expect(() => decodeCallEditSums('[8,1,1,1,1,1,["x"]]')).toThrow(/places/);
  });
});
