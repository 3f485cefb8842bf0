/**
 * Test helpers for the scanner: an independent reference projection (JSON.parse + schema),
 * a noisy serializer (random whitespace, escapes and number spellings), and a driver that
 * feeds the engine in arbitrary pieces through either skipper.
 */
import { expect } from "vitest";
import { SkipArena } from "../../src/scan/arena.ts";
import { ScanMachine } from "../../src/scan/machine.ts";
import type { Schema } from "../../src/scan/schema.ts";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function kindOf(v: unknown): "string" | "number" | "object" | "array" | "boolean" | "null" {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    default:
      return "object";
  }
}

/**
 * What the scanner must return for `v` (a JSON.parse result) under `schema`. `rawLen`
 * gives a string's raw (escaped) byte length; the default assumes JSON.stringify's
 * canonical escaping, which is right for documents written by JSON.stringify.
 */
export function project(
  schema: Schema,
  v: unknown,
  rawLen: (s: string) => number = (s) => Buffer.byteLength(JSON.stringify(s)) - 2,
): unknown {
  const k = kindOf(v);
  switch (schema.kind) {
    case "string":
      if (k !== "string") return { wrongType: k };
      return rawLen(v as string) > schema.maxBytes ? { wrongType: "too-long" } : v;
    case "number":
      return k === "number" ? v : { wrongType: k };
    case "boolean":
      return k === "boolean" ? v : { wrongType: k };
    case "array":
      return k === "array" ? (v as unknown[]).map((x) => project(schema.items, x, rawLen)) : { wrongType: k };
    case "object": {
      if (k !== "object") return { wrongType: k };
      const out: Record<string, unknown> = {};
      for (const name of Object.keys(schema.fields)) {
        if (Object.hasOwn(v as object, name)) {
          // defineProperty: a plain assignment to "__proto__" would set the prototype instead
          Object.defineProperty(out, name, {
            value: project(schema.fields[name] as Schema, (v as Record<string, unknown>)[name], rawLen),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
      }
      return out;
    }
    case "enum":
      if (k !== "string") return { wrongType: k };
      return schema.values.includes(v as string) ? v : { wrongType: "unlisted" };
    case "raw": {
      // A raw value is compared by its text (rawEquality below): the raw bytes depend on escaping.
      if (k !== "string") return { wrongType: k };
      // An `outer` raw (inside an embedded string) is measured in the outer string's bytes.
      const len = schema.outer
        ? Buffer.byteLength(JSON.stringify(JSON.stringify(v).slice(1, -1))) - 2
        : rawLen(v as string);
      if (len <= schema.maxBytes) return { rawText: v };
      return schema.prefix ? { rawPrefix: true } : { wrongType: "too-long" };
    }
    case "shape":
      if (k === "string") return project(schema.string, v, rawLen);
      if (k === "array") return project(schema.array, v, rawLen);
      return { wrongType: k };
    case "embedded": {
      if (k !== "string") return { wrongType: k };
      // Not JSON: "not-json", or with a raw fallback the string's escaped bytes when short enough.
      const notJson = (): unknown => {
        const bytes = Buffer.from(JSON.stringify(v).slice(1, -1), "utf8");
        return schema.rawFallback > 0 && bytes.length <= schema.rawFallback
          ? { buf: bytes, start: 0, end: bytes.length, truncated: false }
          : { wrongType: "not-json" };
      };
      let inner: unknown;
      try {
        inner = JSON.parse(v as string);
      } catch {
        // The reference's verdict, not a skipped failure: the scanner must say the same.
        return notJson();
      }
      // Only an object is decoded (the inner schema is one); any other value is "not-json".
      if (kindOf(inner) !== "object") return notJson();
      return project(schema.inner, inner);
    }
    case "phrases": {
      // The reference: JSON.stringify's escaping of the string, searched per phrase.
      if (k !== "string") return { wrongType: k };
      const text = Buffer.from(JSON.stringify(v).slice(1, -1), "utf8");
      const hits: { phrase: number; at: number }[] = [];
      schema.values.forEach((p, phrase) => {
        for (let i = text.indexOf(p); i >= 0; i = text.indexOf(p, i + 1)) hits.push({ phrase, at: i });
      });
      // A `near` phrase counts only when it starts within `within` bytes after an anchor's end.
      const near = schema.near;
      if (near !== undefined) {
        const anchorLen = Buffer.byteLength(schema.values[near.anchor] ?? "");
        const ends = hits.filter((h) => h.phrase === near.anchor).map((h) => h.at + anchorLen);
        const kept = hits.filter(
          (h) => !near.phrases.includes(h.phrase) || ends.some((e) => h.at >= e && h.at - e <= near.within),
        );
        hits.length = 0;
        hits.push(...kept);
      }
      hits.sort((x, y) => x.at - y.at || x.phrase - y.phrase);
      return { phrase: hits.map((h) => h.phrase), at: hits.map((h) => h.at), truncated: false };
    }
  }
}

export interface NoiseOptions {
  readonly rand: () => number;
  /** Probability of inserting whitespace at each token boundary. */
  readonly ws?: number;
  /** Probability of writing a string character as an escape (\uXXXX or \/). */
  readonly escape?: number;
  /** Respell numbers (1 -> 1.0, 1e0, 1E+0; e -> E). */
  readonly numbers?: boolean;
}

const WS = [" ", "\t", "\n", "\r", "  \n    "];

/** Serializes with random (valid) whitespace, escapes and number spellings. */
export function noisyStringify(v: Json, o: NoiseOptions): string {
  const { rand } = o;
  const ws = (): string => (rand() < (o.ws ?? 0) ? (WS[Math.floor(rand() * WS.length)] as string) : "");
  const str = (s: string): string => {
    if ((o.escape ?? 0) === 0) return JSON.stringify(s);
    let out = '"';
    for (const ch of JSON.stringify(s)
      .slice(1, -1)
      .match(/\\u[0-9a-fA-F]{4}|\\.|[\s\S]/gu) ?? []) {
      if (ch.length === 1 && rand() < (o.escape ?? 0)) {
        const cu = ch.charCodeAt(0);
        out += cu === 0x2f && rand() < 0.5 ? "\\/" : `\\u${cu.toString(16).padStart(4, "0")}`;
      } else if (ch.length === 2 && (ch.codePointAt(0) ?? 0) > 0xffff) {
        // an astral character: optionally as a surrogate pair escape
        out +=
          rand() < (o.escape ?? 0)
            ? `\\u${ch.charCodeAt(0).toString(16)}\\u${ch.charCodeAt(1).toString(16).toUpperCase()}`
            : ch;
      } else {
        out += ch;
      }
    }
    return `${out}"`;
  };
  const numText = (n: number): string => {
    const t = JSON.stringify(n);
    if (!o.numbers) return t;
    const r = rand();
    if (/^-?\d+$/.test(t)) {
      if (r < 0.25) return `${t}.0`;
      if (r < 0.5) return `${t}e0`;
      if (r < 0.75) return `${t}E+00`;
      return t;
    }
    return r < 0.5 ? t.replace("e", "E") : t;
  };
  const go = (x: Json): string => {
    if (x === null || typeof x === "boolean") return String(x);
    if (typeof x === "number") return numText(x);
    if (typeof x === "string") return str(x);
    if (Array.isArray(x)) {
      if (x.length === 0) return `[${ws()}]`;
      return `[${x.map((e) => `${ws()}${go(e)}${ws()}`).join(",")}]`;
    }
    const keys = Object.keys(x);
    if (keys.length === 0) return `{${ws()}}`;
    return `{${keys.map((k) => `${ws()}${str(k)}${ws()}:${ws()}${go(x[k] as Json)}${ws()}`).join(",")}}`;
  };
  return `${ws()}${go(v)}${ws()}`;
}

export type SkipperName = "wasm" | "indexOf";

/**
 * Runs the engine over `buf` cut into pieces of the given sizes (cycled), through the
 * wasm arena (each piece copied into a slot, like a file read) or straight from `buf`.
 */
export function scanPieces(
  buf: Uint8Array,
  schema: Schema,
  sizes: readonly number[],
  skipper: SkipperName,
): unknown {
  const maxPiece = Math.max(1, ...sizes);
  const arena = skipper === "wasm" ? SkipArena.create(maxPiece, 1) : null;
  if (skipper === "wasm" && arena === null) throw new Error("wasm arena unavailable");
  const m = new ScanMachine(schema, "", arena?.skip ?? null);
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let pos = 0;
  for (let k = 0; pos < b.length; k++) {
    const len = Math.max(1, sizes[k % sizes.length] as number);
    const piece = b.subarray(pos, pos + len);
    pos += piece.length;
    if (arena === null) {
      m.feed(piece);
    } else {
      const slot = arena.slot(0);
      slot.set(piece);
      m.feed(slot.subarray(0, piece.length), arena.addr(0));
    }
  }
  return m.end();
}

/** The bytes of a scanned `raw` value (a RawBytes, or one printed with JSON.stringify by a child). */
function rawBytesOf(v: unknown): { bytes: Buffer; truncated: boolean; depth: number } | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const r = v as { buf?: unknown; start?: unknown; end?: unknown; truncated?: unknown; depth?: unknown };
  if (typeof r.start !== "number" || typeof r.end !== "number" || typeof r.truncated !== "boolean")
    return undefined;
  let buf: Buffer | undefined;
  if (Buffer.isBuffer(r.buf)) buf = r.buf;
  else if (typeof r.buf === "object" && r.buf !== null && Array.isArray((r.buf as { data?: unknown }).data))
    buf = Buffer.from((r.buf as { data: number[] }).data);
  const depth = r.depth === 2 ? 2 : 1;
  return buf === undefined
    ? undefined
    : { bytes: buf.subarray(r.start, r.end), truncated: r.truncated, depth };
}

/**
 * `project`'s raw markers equal a scanned raw value: `{rawText}` when its bytes, read as a JSON
 * string's content, are that text; `{rawPrefix: true}` when it is a truncated prefix.
 */
function rawEquality(a: unknown, b: unknown): boolean | undefined {
  const [raw, marker] = rawBytesOf(a) !== undefined ? [rawBytesOf(a), b] : [rawBytesOf(b), a];
  if (raw === undefined || typeof marker !== "object" || marker === null) return undefined;
  const m = marker as { rawText?: unknown; rawPrefix?: unknown };
  if (m.rawPrefix === true) return raw.truncated;
  if (typeof m.rawText !== "string") return undefined;
  if (raw.truncated) return false;
  // Depth 2 (an `outer` raw): the outer string's bytes, read as a string twice.
  let text: string = JSON.parse(`"${raw.bytes.toString("utf8")}"`);
  if (raw.depth === 2) text = JSON.parse(`"${text}"`);
  return text === m.rawText;
}
expect.addEqualityTesters([rawEquality]);
