/**
 * Scratch buffers shared by a scan's machines (machine.ts) and its nested scans (embedded.ts), and
 * those of the line counting (lines.ts, numstat.ts) shared by the edits one reader counts.
 */
import { LinesBuilder } from "./lines.ts";
import { DiffScratch } from "./numstat.ts";

/**
 * Buffers a machine reuses from one string to the next, allocated once per scan (a nested machine
 * is made per embedded text: thousands per document). The nested machines of one depth run one
 * after the other and keep no reference across feeds, so they share their depth's scratch.
 */
export class Scratch {
  /** A string's bytes collected across feeds (`collect`). */
  carry = Buffer.allocUnsafe(256);
  /** An escaped key, unescaped to be compared. */
  key = Buffer.allocUnsafe(64);
  /** The nested scan's unescaped bytes (embedded.ts). */
  out = Buffer.allocUnsafe(256);
  private nested: Scratch | null = null;

  /** The scratch of the machines one embedding deeper. */
  child(): Scratch {
    this.nested ??= new Scratch();
    return this.nested;
  }
}

/**
 * The arrays the line counting of edits reuses (search-replace.ts, patch.ts, the adapters' edit
 * records): two texts' line hashes and a diff's tables. A history is thousands of small edits; a
 * fresh set of typed arrays per edit or block cost more than the counting, and fed the GC. One per
 * reader (an adapter, or a document's parse), used by one count at a time: counting is synchronous.
 */
export class CountingScratch {
  readonly a = new LinesBuilder();
  readonly b = new LinesBuilder();
  readonly diff = new DiffScratch();
}
