/**
 * The resumable scanning engine: a push parser fed one chunk at a time.
 *
 * Two zones. The DECODED zone is the part of the document the schema describes: one
 * JS frame per open allow-listed object/array (bounded by the schema's depth). Every
 * other value is in the SKIP zone, where the only state is a depth counter plus one bit
 * per open container (object/array, for strict bracket matching) — never recursion, so a
 * 1,000,000-deep `[[[[` costs 125 KB, not a stack overflow.
 *
 * Strings dominate the bytes, so a string is crossed with `Buffer#indexOf(0x22)` (native
 * memchr) and a look back over preceding backslashes, never a byte loop. Only what the
 * schema allow-lists is ever copied out of a chunk: keys of allow-listed objects (bounded
 * by the longest field name), allow-listed strings (bounded by maxBytes) and numbers.
 *
 * Validation policy: structure, numbers, literals and the strings that are decoded are
 * strict RFC 8259. Inside SKIPPED strings, escapes are only interpreted to find the
 * closing quote: invalid escapes, raw control characters, NUL and invalid UTF-8 there
 * are tolerated as bytes (checking them would need the byte loop memchr avoids).
 */

import type { SkipFn } from "./arena.ts";
import { decodeJsonString, unescapeKey } from "./decode.ts";
import { EmbeddedScan } from "./embedded.ts";
import { ScanError } from "./errors.ts";
import { PhraseScan } from "./phrases.ts";
import type {
  CompiledFields,
  EmbeddedSchema,
  EnumSchema,
  ObjectSchema,
  RawBytes,
  Schema,
  WrongType,
} from "./schema.ts";
import { compileFields, WRONG } from "./schema.ts";
import { Scratch } from "./scratch.ts";

// Parser states.
const S_BOM = 0;
const S_VALUE = 1; // a value must follow (top level, after ':' or after ',' in an array)
const S_ARR_FIRST = 2; // after '[': a value or ']'
const S_OBJ_FIRST = 3; // after '{': a key or '}'
const S_KEY = 4; // after ',' in an object: a key
const S_COLON = 5;
const S_AFTER = 6; // after a value inside a container: ',' or the closer
const S_DONE = 7; // after the top-level value: whitespace only
const S_STR = 8;
const S_NUM = 9;
const S_LIT = 10;

// What the string being crossed is for.
const M_SKIP_VALUE = 0;
const M_SKIP_KEY = 1;
const M_KEY = 2; // key of an allow-listed object: compared as bytes with the field names
const M_DECODE = 3; // allow-listed string value
const M_ENUM = 4; // allow-listed enum value: compared as bytes with its values, never decoded
const M_EMBED = 5; // a string holding JSON: its bytes feed a nested scan (embedded.ts)
const M_RAW = 6; // a `raw` string: its raw (escaped) bytes are copied out, never decoded
const M_PHRASE = 7; // skipped, its raw bytes searched for fixed phrases (phrases.ts)

// Number sub-states (RFC 8259 grammar); 1, 2, 4 and 7 are the accepting ones.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_E = 5;
const N_ESIGN = 6;
const N_EXP = 7;
const N_START = 8; // nothing consumed yet: the first byte is read by the S_NUM loop, so it is always collected

/** Longest number literal that is decoded; longer allow-listed numbers are `too-long`. */
const MAX_NUMBER_BYTES = 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Up to this many bytes are copied by a loop: Buffer#copy costs a native call (~1 us measured) for any length. */
const SHORT_COPY = 32;

/** `src[a..b)` copied into a Buffer of its own, as a `raw` field's value. */
function rawBytes(src: Buffer, a: number, b: number, truncated: boolean): RawBytes {
  const buf = Buffer.allocUnsafe(b - a);
  src.copy(buf, 0, a, b);
  return { buf, start: 0, end: b - a, truncated };
}

/** How a machine is set up besides its schema (the nested machines inherit the compiled schemas). */
export interface MachineOptions {
  /**
   * The fed buffers are the whole document and are never reused or changed while the result lives
   * (scanFile's small-file path): a top-level `raw` value and an `outer` raw value of an embedded
   * text are then views of them (`RawBytes` over the fed buffer), not copies.
   */
  readonly views?: boolean;
}

/** Marks "nothing to store" (a skipped value under an unknown key). */
const NOTHING: unique symbol = Symbol("nothing");

type CompiledObject = CompiledFields;

// Classes rather than object literals: one stable hidden class per frame kind.
class ObjFrame {
  readonly isObj = true as const;
  /** Field the current value belongs to, or null when it is skipped. */
  name: string | null = null;
  readonly result: Record<string, unknown> = {};
  // Fields spelled out, not parameter properties: the background reader's worker loads these
  // sources with Node's type stripping in tests, which has no parameter properties.
  readonly compiled: CompiledObject;
  constructor(compiled: CompiledObject) {
    this.compiled = compiled;
  }
}

class ArrFrame {
  readonly isObj = false as const;
  readonly result: unknown[] = [];
  readonly items: Schema;
  constructor(items: Schema) {
    this.items = items;
  }
}

type Frame = ObjFrame | ArrFrame;

function setField(target: Record<string, unknown>, name: string, v: unknown): void {
  // A plain assignment to "__proto__" would set the prototype; JSON.parse makes an own property.
  if (name === "__proto__")
    Object.defineProperty(target, name, { value: v, enumerable: true, writable: true, configurable: true });
  else target[name] = v;
}

export class ScanMachine {
  private readonly path: string;
  /** Shared with the nested machines of embedded strings (one per message text): compiled once per scan. */
  private readonly compiled: Map<ObjectSchema | EnumSchema, CompiledObject>;
  /** The enum of the string being crossed (M_ENUM). */
  private enumOf: CompiledObject | null = null;
  /** The nested scan of the string being crossed (M_EMBED). */
  private embed: EmbeddedScan | null = null;
  /** The phrase search of the string being crossed (M_PHRASE). */
  private phraseScan: PhraseScan | null = null;

  private st = S_BOM;
  private bomIdx = 0;
  /** Absolute offset of the current chunk's first byte. */
  private base = 0;

  private readonly frames: Frame[] = [];
  /** Schema for the next value in the decoded zone; null = skip it. */
  private tgt: Schema | null;
  /** What a skipped value entered from the decoded zone stores when it ends. */
  private pending: unknown = NOTHING;
  private root: unknown = NOTHING;

  private skipDepth = 0;
  private skipBits = new Uint32Array(16);

  // String crossing state.
  private strMode = M_SKIP_VALUE;
  private strStart = 0; // absolute offset of the first content byte
  private bsOdd = false; // the part in earlier chunks ended in an odd run of backslashes
  private strLimit = 0;
  private carried = false; // content spans chunks: collected bytes are in `carry`
  private carryLen = 0;
  private over = false; // collected content exceeded strLimit
  private rawPrefix = false; // M_RAW: keep the first strLimit bytes of a longer string
  private rawOuter = false; // M_RAW: inside an embedded string, crossed in the outer bytes (embedded.ts)
  private readonly scratch: Scratch;
  /** `MachineOptions.views`. */
  private readonly views: boolean;

  // Number state.
  private numSt = N_MINUS;
  private numCollect = false;

  // Literal state.
  private lit = "";
  private litIdx = 0;

  private readonly skip: SkipFn | null;

  constructor(
    schema: Schema,
    path = "",
    skip: SkipFn | null = null,
    opts: MachineOptions = {},
    compiled: Map<ObjectSchema | EnumSchema, CompiledObject> = new Map(),
    scratch: Scratch = new Scratch(),
  ) {
    this.path = path;
    this.tgt = schema;
    this.skip = skip;
    this.compiled = compiled;
    this.scratch = scratch;
    this.views = opts.views === true;
  }

  /**
   * Feeds the next chunk, `buf[from..to)`. The machine keeps no reference to `buf` after
   * returning (unless `MachineOptions.views`). `addr` is where `buf` lives in the SkipArena memory
   * (with the arena's slack after it), or -1 for a buffer outside it, which is then crossed with
   * `Buffer#indexOf`.
   */
  feed(buf: Buffer, addr = -1, from = 0, to = buf.length): void {
    if (addr >= 0 && this.skip === null) throw new Error("scan machine: arena address without an arena");
    const n = to;
    let i = from;
    // `base` is the absolute offset of buf[0] while this chunk is scanned.
    this.base -= from;
    let st = this.st;
    while (i < n) {
      if (st >= S_VALUE && st <= S_DONE) {
        // Structural states: skip a whole whitespace run (pretty-printed indentation) at once.
        let c = buf[i] as number;
        while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
          if (++i === n) break;
          c = buf[i] as number;
        }
        if (i === n) break;
      }
      switch (st) {
        case S_STR: {
          const segStart = i;
          let q: number;
          if (addr >= 0) {
            const r = (this.skip as SkipFn)(addr + segStart, addr + n, this.bsOdd ? 1 : 0);
            if (r < 0) this.bsOdd = r === -2;
            q = r < 0 ? -1 : r - addr;
          } else {
            q = this.findQuote(buf, segStart, n);
          }
          if (q < 0) {
            // The string goes on in the next chunk; bsOdd now carries the backslash parity.
            if (this.strMode === M_EMBED) {
              (this.embed as EmbeddedScan).feed(buf, segStart, n, false);
              if (this.strLimit > 0) this.collect(buf, segStart, n);
            } else if (this.strMode === M_PHRASE) (this.phraseScan as PhraseScan).feed(buf, segStart, n);
            else if (this.strMode >= M_KEY) this.collect(buf, segStart, n);
            this.carried = true;
            i = n;
            break;
          }
          i = q + 1;
          st = this.endString(buf, segStart, q);
          break;
        }

        case S_VALUE:
        case S_ARR_FIRST: {
          const c = buf[i] as number;
          if (c === 0x5d && st === S_ARR_FIRST) {
            i++;
            st = this.closeContainer(false, i - 1);
            break;
          }
          const inSkip = this.skipDepth > 0;
          let t = inSkip ? null : this.tgt;
          // A value of more than one shape: the schema of the shape met (any other: a WrongType below).
          if (t !== null && t.kind === "shape") t = c === QUOTE ? t.string : c === 0x5b ? t.array : t;
          if (c === QUOTE) {
            i++;
            if (t !== null && t.kind === "string") {
              this.beginString(M_DECODE, i, t.maxBytes);
            } else if (t !== null && t.kind === "enum") {
              this.enumOf = this.compile(t);
              this.beginString(M_ENUM, i, this.enumOf.maxRaw);
            } else if (t !== null && t.kind === "embedded") {
              const nested = this.scratch.child();
              this.embed = new EmbeddedScan(
                new ScanMachine(t.inner, "", null, {}, this.compiled, nested),
                nested,
                this.views,
              );
              // A raw fallback collects the string's bytes too (up to its limit) while it is scanned.
              this.beginString(M_EMBED, i, this.fallbackLimit(t));
            } else if (t !== null && t.kind === "phrases") {
              this.phraseScan = new PhraseScan(t.needles, t.near);
              this.beginString(M_PHRASE, i, 0);
            } else if (t !== null && t.kind === "raw") {
              this.beginString(M_RAW, i, t.maxBytes);
              this.rawPrefix = t.prefix;
              this.rawOuter = t.outer;
            } else {
              if (!inSkip) this.pending = t === null ? NOTHING : WRONG.string;
              this.beginString(M_SKIP_VALUE, i, 0);
            }
            st = S_STR;
          } else if (c === 0x7b) {
            i++;
            if (t !== null && t.kind === "object") {
              this.frames.push(new ObjFrame(this.compile(t)));
            } else {
              if (!inSkip) this.pending = t === null ? NOTHING : WRONG.object;
              this.pushSkip(true);
            }
            st = S_OBJ_FIRST;
          } else if (c === 0x5b) {
            i++;
            if (t !== null && t.kind === "array") {
              this.frames.push(new ArrFrame(t.items));
              this.tgt = t.items;
            } else {
              if (!inSkip) this.pending = t === null ? NOTHING : WRONG.array;
              this.pushSkip(false);
            }
            st = S_ARR_FIRST;
          } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
            this.numCollect = t !== null && t.kind === "number";
            if (!inSkip && !this.numCollect) this.pending = t === null ? NOTHING : WRONG.number;
            this.numSt = N_START;
            this.carried = false;
            this.carryLen = 0;
            this.over = false;
            st = S_NUM;
          } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
            const isNull = c === 0x6e;
            if (!inSkip) {
              // A boolean literal is the one scalar decoded without copying bytes: its first byte says which.
              this.pending =
                t === null
                  ? NOTHING
                  : isNull
                    ? WRONG.null
                    : t.kind === "boolean"
                      ? c === 0x74
                      : WRONG.boolean;
            }
            this.lit = c === 0x74 ? "true" : c === 0x66 ? "false" : "null";
            this.litIdx = 1;
            i++;
            st = S_LIT;
          } else {
            throw this.syntax(i, "unexpected byte where a value was expected");
          }
          break;
        }

        case S_AFTER: {
          const c = buf[i] as number;
          if (c === 0x2c) {
            i++;
            if (this.topIsObject()) {
              st = S_KEY;
            } else {
              st = S_VALUE;
              if (this.skipDepth === 0) this.tgt = (this.frames[this.frames.length - 1] as ArrFrame).items;
            }
          } else if (c === 0x7d || c === 0x5d) {
            i++;
            st = this.closeContainer(c === 0x7d, i - 1);
          } else {
            throw this.syntax(i, "expected ',' or a closing bracket");
          }
          break;
        }

        case S_OBJ_FIRST:
        case S_KEY: {
          const c = buf[i] as number;
          if (c === QUOTE) {
            i++;
            if (this.skipDepth > 0) {
              this.beginString(M_SKIP_KEY, i, 0);
            } else {
              const f = this.frames[this.frames.length - 1] as ObjFrame;
              this.beginString(M_KEY, i, f.compiled.maxRaw);
            }
            st = S_STR;
          } else if (c === 0x7d && st === S_OBJ_FIRST) {
            i++;
            st = this.closeContainer(true, i - 1);
          } else {
            throw this.syntax(i, "expected a key");
          }
          break;
        }

        case S_COLON: {
          const c = buf[i] as number;
          if (c === 0x3a) {
            i++;
            st = S_VALUE;
          } else {
            throw this.syntax(i, "expected ':'");
          }
          break;
        }

        case S_NUM: {
          const segStart = i;
          let ns = this.numSt;
          for (; i < n; i++) {
            const c = buf[i] as number;
            if (c >= 0x30 && c <= 0x39) {
              if (ns === N_ZERO) break; // "01": the number is "0" and the digit is a syntax error after it
              if (ns === N_MINUS || ns === N_START) ns = c === 0x30 ? N_ZERO : N_INT;
              else if (ns === N_DOT) ns = N_FRAC;
              else if (ns === N_E || ns === N_ESIGN) ns = N_EXP;
            } else if (c === 0x2e) {
              if (ns !== N_ZERO && ns !== N_INT) break;
              ns = N_DOT;
            } else if (c === 0x65 || c === 0x45) {
              if (ns !== N_ZERO && ns !== N_INT && ns !== N_FRAC) break;
              ns = N_E;
            } else if (c === 0x2d && ns === N_START) {
              ns = N_MINUS;
            } else if (c === 0x2b || c === 0x2d) {
              if (ns !== N_E) break;
              ns = N_ESIGN;
            } else {
              break;
            }
          }
          this.numSt = ns;
          if (i === n) {
            if (this.numCollect) {
              this.strLimit = MAX_NUMBER_BYTES;
              this.collect(buf, segStart, n);
              this.carried = true;
            }
            break;
          }
          st = this.endNumber(buf, segStart, i);
          break;
        }

        case S_LIT: {
          const lit = this.lit;
          let k = this.litIdx;
          while (k < lit.length && i < n) {
            if (buf[i] !== lit.charCodeAt(k)) throw this.syntax(i, "bad literal");
            k++;
            i++;
          }
          this.litIdx = k;
          if (k === lit.length) st = this.endScalar();
          break;
        }

        case S_DONE:
          // Whitespace was skipped above, so anything here is trailing data.
          throw this.syntax(i, "data after the top-level value");

        case S_BOM: {
          const c = buf[i] as number;
          if (this.bomIdx === 0 && c !== 0xef) {
            st = S_VALUE;
            break;
          }
          if (c !== [0xef, 0xbb, 0xbf][this.bomIdx]) throw this.syntax(i, "bad byte order mark");
          i++;
          if (++this.bomIdx === 3) st = S_VALUE;
          break;
        }

        default:
          throw new Error(`scan machine: unknown state ${st}`);
      }
    }
    this.st = st;
    this.base += n;
  }

  /**
   * True between the opening quote of a string that is skipped and its content: the nested scan
   * (embedded.ts) then finds the closing quote in the outer bytes itself, unescaping nothing.
   */
  inSkippedString(): boolean {
    return this.st === S_STR && (this.strMode <= M_SKIP_KEY || this.strMode === M_PHRASE);
  }

  /**
   * The phrase search of the skipped string just opened (with inSkippedString), or null: the
   * nested scan feeds it the raw bytes it crosses, and this machine stores its result at the
   * closing quote.
   */
  skippedPhrases(): PhraseScan | null {
    return this.st === S_STR && this.strMode === M_PHRASE ? this.phraseScan : null;
  }

  /**
   * Just after the opening quote of a `raw({outer: true})` string: its byte limit (the nested scan
   * then crosses it in the outer bytes and hands the value over with `endOuterRaw`), else -1.
   */
  outerRawLimit(): number {
    return this.st === S_STR && this.strMode === M_RAW && this.rawOuter ? this.strLimit : -1;
  }

  /** The value of the string `outerRawLimit` announced, which this machine was not fed. */
  endOuterRaw(v: RawBytes | WrongType): void {
    this.store(v);
    this.st = this.afterValue();
  }

  /** Signals end of input and returns the top-level value. */
  end(): unknown {
    if (this.base === 0) throw new ScanError("empty", 0, this.path, "no bytes");
    if (this.st === S_NUM) {
      const ns = this.numSt;
      if (ns === N_ZERO || ns === N_INT || ns === N_FRAC || ns === N_EXP) {
        this.st = this.endNumber(Buffer.alloc(0), 0, 0);
      }
    }
    if (this.st !== S_DONE) {
      throw new ScanError("truncated", this.base, this.path, "input ended inside the document");
    }
    return this.root;
  }

  /**
   * Finds the closing quote of the string whose content in this chunk starts at `a`, with
   * memchr per quote and a look back over the backslashes before it. Returns -1 when the
   * string goes on past the chunk, after recording the parity of its trailing backslashes.
   */
  private findQuote(buf: Buffer, a: number, n: number): number {
    let p = a;
    for (;;) {
      const q = buf.indexOf(QUOTE, p);
      if (q < 0 || q >= n) {
        let k = n - 1;
        while (k >= a && buf[k] === BACKSLASH) k--;
        const run = n - 1 - k;
        this.bsOdd = k < a ? ((this.bsOdd ? 1 : 0) + run) % 2 === 1 : run % 2 === 1;
        return -1;
      }
      let k = q - 1;
      while (k >= a && buf[k] === BACKSLASH) k--;
      let run = q - 1 - k;
      if (k < a && this.bsOdd) run++;
      if (run % 2 === 0) return q;
      p = q + 1;
    }
  }

  /** An embedded string's raw fallback limit: 0 when its `rawFallbackIf` values were not met before it. */
  private fallbackLimit(t: EmbeddedSchema): number {
    const when = t.rawFallbackIf;
    if (when === undefined) return t.rawFallback;
    const f = this.frames[this.frames.length - 1];
    if (f === undefined || !f.isObj) return 0;
    for (const field in when) {
      const v = f.result[field];
      if (typeof v === "string" && (when[field] as readonly string[]).includes(v)) return t.rawFallback;
    }
    return 0;
  }

  private compile(t: ObjectSchema | EnumSchema): CompiledObject {
    // Built with the schema by obj()/oneOf(); a schema written as a literal is compiled once per scan.
    if (t.compiled !== undefined) return t.compiled;
    let compiled = this.compiled.get(t);
    if (compiled === undefined) {
      compiled = compileFields(t);
      this.compiled.set(t, compiled);
    }
    return compiled;
  }

  private syntax(i: number, what: string): ScanError {
    return new ScanError("syntax", this.base + i, this.path, what);
  }

  private beginString(mode: number, i: number, limit: number): void {
    this.strMode = mode;
    this.strStart = this.base + i;
    this.bsOdd = false;
    this.strLimit = limit;
    this.carried = false;
    this.carryLen = 0;
    this.over = false;
  }

  /** Appends `buf[a..b)` to the carry, unless that would pass `strLimit` (then only flags it). */
  private collect(buf: Buffer, a: number, b: number): void {
    if (this.over) return;
    const len = b - a;
    const need = this.carryLen + len;
    if (need > this.strLimit) {
      // A raw prefix keeps what fits; every other mode only needs to know it is too long.
      if (this.strMode === M_RAW && this.rawPrefix) this.collect(buf, a, a + (this.strLimit - this.carryLen));
      this.over = true;
      return;
    }
    const sc = this.scratch;
    if (need > sc.carry.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, sc.carry.length * 2));
      sc.carry.copy(grown, 0, 0, this.carryLen);
      sc.carry = grown;
    }
    if (len <= SHORT_COPY) {
      // Keys and numbers fed piece by piece by the nested scan: a loop beats Buffer#copy's call.
      const dst = sc.carry;
      for (let j = 0; j < len; j++) dst[this.carryLen + j] = buf[a + j] as number;
    } else buf.copy(sc.carry, this.carryLen, a, b);
    this.carryLen = need;
  }

  /** The closing quote is at `q`; content in this chunk starts at `a`. Returns the next state. */
  private endString(buf: Buffer, a: number, q: number): number {
    const mode = this.strMode;
    if (mode === M_SKIP_VALUE) return this.endScalar();
    if (mode === M_SKIP_KEY) return S_COLON;
    if (mode === M_EMBED) {
      const embed = this.embed as EmbeddedScan;
      this.embed = null;
      embed.feed(buf, a, q, true);
      const inner = embed.end();
      if (inner !== WRONG["not-json"] || this.strLimit === 0) this.store(inner);
      else this.store(this.embeddedRaw(buf, a, q) ?? inner);
      return this.afterValue();
    }
    if (mode === M_PHRASE) {
      const scan = this.phraseScan as PhraseScan;
      this.phraseScan = null;
      scan.feed(buf, a, q, true);
      this.store(scan.end());
      return this.afterValue();
    }

    // Collected modes: the content is buf[a..q) or, if it spans chunks, the carry.
    let src = buf;
    let from = a;
    let to = q;
    let srcBase = this.base;
    if (this.carried) {
      this.collect(buf, a, q);
      src = this.scratch.carry;
      from = 0;
      to = this.carryLen;
      srcBase = this.strStart;
    } else if (q - a > this.strLimit) {
      this.over = true;
    }

    if (mode === M_KEY) {
      const f = this.frames[this.frames.length - 1] as ObjFrame;
      const idx = this.over ? -1 : this.matchKey(f.compiled, src, from, to, srcBase);
      if (idx < 0) {
        f.name = null;
        this.tgt = null;
      } else {
        f.name = f.compiled.names[idx] as string;
        this.tgt = f.compiled.schemas[idx] as Schema;
      }
      return S_COLON;
    }

    if (mode === M_RAW) {
      // A copy: the chunk (or the carry) is reused for the next bytes; a view of a kept document.
      const end = this.over ? Math.min(to, from + this.strLimit) : to;
      if (this.over && !this.rawPrefix) this.store(WRONG["too-long"]);
      else if (this.views && src === buf) this.store({ buf, start: from, end, truncated: this.over });
      else this.store(rawBytes(src, from, end, this.over));
      return this.afterValue();
    }

    if (mode === M_ENUM) {
      const c = this.enumOf as CompiledObject;
      const idx = this.over ? -1 : this.matchKey(c, src, from, to, srcBase);
      // The schema's own constant: no string is made of the document's bytes.
      this.store(idx < 0 ? WRONG.unlisted : c.names[idx]);
      return this.afterValue();
    }

    // M_DECODE
    this.store(this.over ? WRONG["too-long"] : decodeJsonString(src, from, to, srcBase, this.path));
    return this.afterValue();
  }

  /** A not-JSON embedded string's raw bytes (its rawFallback), or undefined when longer than that. */
  private embeddedRaw(buf: Buffer, a: number, q: number): RawBytes | undefined {
    if (this.carried) {
      this.collect(buf, a, q);
      return this.over ? undefined : rawBytes(this.scratch.carry, 0, this.carryLen, false);
    }
    if (q - a > this.strLimit) return undefined;
    return this.views ? { buf, start: a, end: q, truncated: false } : rawBytes(buf, a, q, false);
  }

  private matchKey(c: CompiledObject, src: Buffer, a: number, b: number, srcBase: number): number {
    // Keys reaching here are at most maxRaw bytes long, so a byte loop is cheap.
    let escaped = false;
    for (let j = a; j < b; j++) {
      const ch = src[j] as number;
      if (ch === BACKSLASH) escaped = true;
      else if (ch < 0x20)
        throw new ScanError("syntax", srcBase + j, this.path, "raw control character in key");
    }
    let k = src;
    let from = a;
    let len = b - a;
    if (escaped) {
      const sc = this.scratch;
      if (sc.key.length < len) sc.key = Buffer.allocUnsafe(len);
      len = unescapeKey(src, a, b, sc.key, srcBase, this.path);
      k = sc.key;
      from = 0;
    }
    const names = c.bytes;
    outer: for (let idx = 0; idx < names.length; idx++) {
      const nb = names[idx] as Uint8Array;
      if (nb.length !== len) continue;
      for (let j = 0; j < len; j++) if (nb[j] !== k[from + j]) continue outer;
      return idx;
    }
    return -1;
  }

  /** The number ends at `buf[end]`; its bytes in this chunk are `buf[a..end)` (earlier ones are in the carry). */
  private endNumber(buf: Buffer, a: number, end: number): number {
    const ns = this.numSt;
    if (ns !== N_ZERO && ns !== N_INT && ns !== N_FRAC && ns !== N_EXP) {
      throw this.syntax(end, "malformed number");
    }
    if (!this.numCollect) return this.endScalar();
    let v: unknown;
    if (this.carried) {
      this.strLimit = MAX_NUMBER_BYTES;
      this.collect(buf, a, end);
      v = this.over ? WRONG["too-long"] : Number(this.scratch.carry.toString("latin1", 0, this.carryLen));
    } else {
      v = end - a > MAX_NUMBER_BYTES ? WRONG["too-long"] : Number(buf.toString("latin1", a, end));
    }
    this.store(v);
    return this.afterValue();
  }

  /** A skipped scalar ended. */
  private endScalar(): number {
    if (this.skipDepth === 0 && this.pending !== NOTHING) {
      this.store(this.pending);
      this.pending = NOTHING;
    }
    return this.afterValue();
  }

  private afterValue(): number {
    return this.skipDepth > 0 || this.frames.length > 0 ? S_AFTER : S_DONE;
  }

  private store(v: unknown): void {
    const frames = this.frames;
    if (frames.length === 0) {
      this.root = v;
      return;
    }
    const f = frames[frames.length - 1] as Frame;
    if (f.isObj) {
      if (f.name !== null) setField(f.result, f.name, v);
    } else {
      f.result.push(v);
    }
  }

  private topIsObject(): boolean {
    const d = this.skipDepth;
    if (d > 0) {
      const bit = d - 1;
      return ((this.skipBits[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
    }
    return (this.frames[this.frames.length - 1] as Frame).isObj;
  }

  private pushSkip(isObj: boolean): void {
    const d = this.skipDepth;
    const w = d >>> 5;
    if (w >= this.skipBits.length) {
      const grown = new Uint32Array(this.skipBits.length * 2);
      grown.set(this.skipBits);
      this.skipBits = grown;
    }
    const mask = 1 << (d & 31);
    if (isObj) this.skipBits[w] = (this.skipBits[w] as number) | mask;
    else this.skipBits[w] = (this.skipBits[w] as number) & ~mask;
    this.skipDepth = d + 1;
  }

  /** A closer at chunk index `i`. Returns the next state. */
  private closeContainer(isObj: boolean, i: number): number {
    if (this.skipDepth === 0 && this.frames.length === 0) throw this.syntax(i, "unbalanced closer");
    if (this.topIsObject() !== isObj) throw this.syntax(i, "mismatched closer");
    if (this.skipDepth > 0) {
      this.skipDepth--;
      if (this.skipDepth === 0 && this.pending !== NOTHING) {
        this.store(this.pending);
        this.pending = NOTHING;
      }
      return this.afterValue();
    }
    // The enclosing container resets `tgt` itself: per key (object) or on ',' (array).
    const f = this.frames.pop() as Frame;
    this.store(f.result);
    return this.afterValue();
  }
}
