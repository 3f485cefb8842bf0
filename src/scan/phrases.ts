/**
 * Fixed phrases found in the raw bytes of a skipped string as it is crossed, piece by piece
 * (a chunk of the file, or a piece of an embedded text): `Buffer#indexOf` per phrase within the
 * piece, plus a small window over each boundary between pieces for a phrase cut in two. Only
 * the phrase's index and offset are kept; no byte of the text is copied beyond the window.
 * Phrases hold no byte a JSON writer escapes (schema.ts `phrases()`), so they read the same in
 * the raw bytes at any escaping depth.
 */
import type { PhraseHits } from "./schema.ts";

/** Occurrences kept per string: a request text names a few tool results, never thousands. */
export const MAX_PHRASE_HITS = 4096;

export class PhraseScan {
  private readonly needles: readonly Buffer[];
  /** The last (longest phrase - 1) bytes crossed: where a phrase cut by a boundary starts. */
  private tail: Buffer;
  private tailLen = 0;
  private readonly maxLen: number;
  /** Raw bytes crossed before the current piece. */
  private offset = 0;
  private readonly hits: { phrase: number; at: number }[] = [];
  private truncated = false;

  constructor(needles: readonly Buffer[]) {
    this.needles = needles;
    let m = 1;
    for (const n of needles) m = Math.max(m, n.length);
    this.maxLen = m;
    this.tail = Buffer.alloc(m);
  }

  /** The next raw bytes of the string, `buf[a..b)`. */
  feed(buf: Uint8Array, a: number, b: number): void {
    if (b <= a) return;
    const piece = Buffer.from(buf.buffer, buf.byteOffset + a, b - a);
    if (this.tailLen > 0) this.boundary(piece);
    for (let id = 0; id < this.needles.length; id++) {
      const needle = this.needles[id] as Buffer;
      for (let i = piece.indexOf(needle); i >= 0; i = piece.indexOf(needle, i + 1))
        this.hit(id, this.offset + i);
    }
    this.keepTail(piece);
    this.offset += piece.length;
  }

  /** Phrases that start in the tail and end in `piece`. */
  private boundary(piece: Buffer): void {
    const head = Math.min(piece.length, this.maxLen - 1);
    const window = Buffer.concat([this.tail.subarray(0, this.tailLen), piece.subarray(0, head)]);
    const start = this.offset - this.tailLen;
    for (let id = 0; id < this.needles.length; id++) {
      const needle = this.needles[id] as Buffer;
      for (let i = window.indexOf(needle); i >= 0 && i < this.tailLen; i = window.indexOf(needle, i + 1)) {
        // Wholly inside the tail: the earlier piece found it already.
        if (i + needle.length > this.tailLen) this.hit(id, start + i);
      }
    }
  }

  private keepTail(piece: Buffer): void {
    const keep = this.maxLen - 1;
    if (keep === 0) return;
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
    const sorted = this.hits.sort((x, y) => x.at - y.at || x.phrase - y.phrase);
    this.tail = Buffer.alloc(0);
    return Object.freeze({
      phrase: Object.freeze(sorted.map((h) => h.phrase)),
      at: Object.freeze(sorted.map((h) => h.at)),
      truncated: this.truncated,
    });
  }
}
