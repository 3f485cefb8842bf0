/**
 * Fixed phrases found in the raw bytes of a skipped string as it is crossed, piece by piece
 * (a chunk of the file, or a piece of an embedded text): `Buffer#indexOf` per phrase within the
 * piece, plus a small window over each boundary between pieces for a phrase cut in two. Phrases
 * that matter only right after an anchor phrase (`near`) are searched only in the few bytes after
 * each anchor, not through the whole text: a request text is mostly file contents and
 * environment details, and each full search is a pass over it. Only the phrase's index and
 * offset are kept; no byte of the text is copied beyond the window. Phrases hold no byte a JSON
 * writer escapes (schema.ts `phrases()`), so they read the same in the raw bytes at any
 * escaping depth.
 */
import type { PhraseHits, PhrasesNear } from "./schema.ts";

/** The result of a string without any phrase (most request texts): one frozen value for all. */
const NO_HITS: PhraseHits = Object.freeze({
  phrase: Object.freeze([]),
  at: Object.freeze([]),
  truncated: false,
});

/** Occurrences kept per string: a request text names a few tool results, never thousands. */
export const MAX_PHRASE_HITS = 4096;

export class PhraseScan {
  private readonly needles: readonly Uint8Array[];
  /** Indices searched through every piece. */
  private readonly free: readonly number[];
  private readonly near: PhrasesNear | undefined;
  /** The longest `near` phrase. */
  private readonly nearLen: number;
  /** Absolute offset up to which a `near` phrase may still start after the last anchor, or -1. */
  private nearUntil = -1;
  private nearFrom = 0;
  /**
   * The last (longest phrase - 1) bytes crossed: where a phrase cut by a boundary starts. Made
   * only when a string goes on past a piece (most are crossed in one).
   */
  private tail: Buffer | null = null;
  private tailLen = 0;
  private readonly maxLen: number;
  /** Raw bytes crossed before the current piece. */
  private offset = 0;
  private readonly hits: { phrase: number; at: number }[] = [];
  private truncated = false;

  constructor(needles: readonly Uint8Array[], near?: PhrasesNear) {
    this.needles = needles;
    this.near = near;
    const nearSet = new Set(near?.phrases ?? []);
    this.free = needles.map((_, i) => i).filter((i) => !nearSet.has(i));
    let m = 1;
    for (const n of needles) m = Math.max(m, n.length);
    this.maxLen = m;
    let nl = 0;
    for (const i of near?.phrases ?? []) nl = Math.max(nl, (needles[i] as Uint8Array).length);
    this.nearLen = nl;
  }

  /** The next raw bytes of the string, `buf[a..b)`; `last`: no more follow. */
  feed(buf: Buffer, a: number, b: number, last = false): void {
    if (b <= a) return;
    const piece = buf.subarray(a, b);
    if (this.tailLen > 0) this.boundary(piece);
    const anchors: number[] = [];
    for (const id of this.free) {
      const needle = this.needles[id] as Uint8Array;
      for (let i = piece.indexOf(needle); i >= 0; i = piece.indexOf(needle, i + 1)) {
        this.hit(id, this.offset + i);
        if (id === this.near?.anchor) anchors.push(i + needle.length);
      }
    }
    if (this.near !== undefined) this.nearSearch(piece, anchors);
    if (!last) this.keepTail(piece);
    this.offset += piece.length;
  }

  /**
   * The `near` phrases wholly inside `piece` that start within `within` bytes after an anchor's
   * end (an anchor of an earlier piece included); one cut by a boundary is the window's.
   */
  private nearSearch(piece: Buffer, anchorEnds: readonly number[]): void {
    const near = this.near as PhrasesNear;
    const regions: [number, number][] = [];
    if (this.nearUntil >= this.offset)
      regions.push([Math.max(0, this.nearFrom - this.offset), this.nearUntil - this.offset]);
    for (const e of anchorEnds) regions.push([e, e + near.within]);
    for (const [from, lastStart] of regions) {
      const region = piece.subarray(from, Math.min(piece.length, lastStart + this.nearLen));
      for (const id of near.phrases) {
        const i = region.indexOf(this.needles[id] as Uint8Array);
        if (i >= 0 && from + i <= lastStart) this.hit(id, this.offset + from + i);
      }
    }
    const last = anchorEnds.at(-1);
    if (last !== undefined) {
      this.nearFrom = this.offset + last;
      this.nearUntil = this.offset + last + near.within;
    }
  }

  /** Phrases that start in the tail and end in `piece`. */
  private boundary(piece: Buffer): void {
    const head = Math.min(piece.length, this.maxLen - 1);
    const window = Buffer.concat([(this.tail as Buffer).subarray(0, this.tailLen), piece.subarray(0, head)]);
    const start = this.offset - this.tailLen;
    for (let id = 0; id < this.needles.length; id++) {
      const needle = this.needles[id] as Uint8Array;
      for (let i = window.indexOf(needle); i >= 0 && i < this.tailLen; i = window.indexOf(needle, i + 1)) {
        // Wholly inside the tail: the earlier piece found it already.
        if (i + needle.length <= this.tailLen) continue;
        // A near phrase counts only right after the last anchor.
        if (this.isNear(id) && (start + i < this.nearFrom || start + i > this.nearUntil)) continue;
        this.hit(id, start + i);
        if (id === this.near?.anchor) {
          // An anchor cut by the boundary: its near phrases are looked for in this piece.
          this.nearFrom = start + i + needle.length;
          this.nearUntil = this.nearFrom + this.near.within;
        }
      }
    }
  }

  private isNear(id: number): boolean {
    return this.near !== undefined && id !== this.near.anchor && this.near.phrases.includes(id);
  }

  private keepTail(piece: Buffer): void {
    const keep = this.maxLen - 1;
    if (keep === 0) return;
    this.tail ??= Buffer.alloc(keep);
    if (piece.length >= keep) {
      piece.copy(this.tail, 0, piece.length - keep);
      this.tailLen = keep;
      return;
    }
    // A short piece: the old tail's last bytes, then the piece.
    const fromOld = Math.min(this.tailLen, keep - piece.length);
    this.tail.copy(this.tail, 0, this.tailLen - fromOld, this.tailLen);
    piece.copy(this.tail, fromOld);
    this.tailLen = fromOld + piece.length;
  }

  private hit(phrase: number, at: number): void {
    if (this.hits.length >= MAX_PHRASE_HITS) {
      this.truncated = true;
      return;
    }
    this.hits.push({ phrase, at });
  }

  /** The occurrences in order of offset (each phrase was searched on its own). */
  end(): PhraseHits {
    this.tail = null;
    if (this.hits.length === 0) return NO_HITS;
    // Two anchors' regions may overlap: a near phrase found twice is one occurrence.
    const sorted = this.hits
      .sort((x, y) => x.at - y.at || x.phrase - y.phrase)
      .filter((h, i, all) => i === 0 || h.at !== all[i - 1]?.at || h.phrase !== all[i - 1]?.phrase);
    return Object.freeze({
      phrase: Object.freeze(sorted.map((h) => h.phrase)),
      at: Object.freeze(sorted.map((h) => h.at)),
      truncated: this.truncated,
    });
  }
}
