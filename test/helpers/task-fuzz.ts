/**
 * Task-format documents for the fuzz tests (test/reliability/fuzz-tasks.test.ts), built as bytes:
 * any JSON value, with raw pieces where a document must hold what JSON.stringify cannot write
 * (NaN, 1e400, invalid escapes, invalid UTF-8, a count as a string), and the api_req_started
 * `text` as a JSON string holding JSON, as the legacy core writes it.
 */

/** Bytes put in the document as they are. */
export class Raw {
  readonly pieces: readonly (string | Buffer)[];
  constructor(pieces: readonly (string | Buffer)[]) {
    this.pieces = pieces;
  }
}

export const raw = (...pieces: (string | Buffer)[]): Raw => new Raw(pieces);

export type Json = null | boolean | number | string | Raw | readonly Json[] | { readonly [k: string]: Json };

/** The document's bytes. */
export function encode(v: Json): Buffer {
  const out: Buffer[] = [];
  const put = (s: string | Buffer) => out.push(typeof s === "string" ? Buffer.from(s) : s);
  const walk = (x: Json): void => {
    if (x instanceof Raw) for (const p of x.pieces) put(p);
    else if (Array.isArray(x)) {
      put("[");
      x.forEach((e, i) => {
        if (i > 0) put(",");
        walk(e);
      });
      put("]");
    } else if (x !== null && typeof x === "object") {
      put("{");
      Object.entries(x as Record<string, Json>).forEach(([k, e], i) => {
        if (i > 0) put(",");
        put(`${JSON.stringify(k)}:`);
        walk(e);
      });
      put("}");
    } else put(JSON.stringify(x));
  };
  walk(v);
  return Buffer.concat(out);
}

/** Bytes that go into the OUTER string as they are (an invalid escape of the outer string). */
export class Outer {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * A JSON string holding `inner` (the inner document's text): strings are escaped into the outer
 * string, Buffers (invalid UTF-8) put in as bytes, Outer pieces as they are.
 */
export function embedded(...inner: (string | Buffer | Outer)[]): Raw {
  const pieces: (string | Buffer)[] = ['"'];
  for (const p of inner) {
    if (p instanceof Outer) pieces.push(p.text);
    else if (typeof p === "string") pieces.push(JSON.stringify(p).slice(1, -1));
    else pieces.push(p);
  }
  pieces.push('"');
  return new Raw(pieces);
}

export const COUNT_FIELDS = ["tokensIn", "tokensOut", "cacheReads", "cacheWrites"] as const;
export type CountField = (typeof COUNT_FIELDS)[number];
export type Counts = Readonly<Record<CountField, number>>;

export const ANTHROPIC = { providerId: "anthropic", modelId: "claude-sonnet-4-5", mode: "act" };

/**
 * The request text: a string; bytes, the inner string's content as the OUTER string holds it (put
 * in as they are: invalid UTF-8, or text escaped twice ahead of time); or any inner JSON (`inner`).
 */
export type RequestText = string | Buffer | { readonly inner: string };

/**
 * An `api_req_started` entry, `counts` as raw JSON texts (a field left out is absent), the request
 * text as the inner document's `request` (a string, or bytes put in raw).
 */
export function requestEntry(
  ts: string,
  counts: Partial<Record<CountField | "cost", string>>,
  request: RequestText = "req",
  say: Json = "api_req_started",
): Json {
  // A Buffer goes into the outer string as it is: its quotes are the inner string's, escaped.
  const req: (string | Buffer)[] =
    typeof request === "string"
      ? [JSON.stringify(request)]
      : Buffer.isBuffer(request)
        ? ['"', request, '"']
        : [request.inner];
  const fields = Object.entries(counts).map(([k, v]) => `,${JSON.stringify(k)}:${v}`);
  return {
    ts: raw(ts),
    type: "say",
    say,
    text: embedded('{"request":', ...req, ...fields, "}"),
    modelInfo: ANTHROPIC,
    conversationHistoryIndex: 0,
  };
}

/** Counts as the raw texts of a valid entry. */
export function countTexts(c: Counts): Record<CountField, string> {
  return {
    tokensIn: String(c.tokensIn),
    tokensOut: String(c.tokensOut),
    cacheReads: String(c.cacheReads),
    cacheWrites: String(c.cacheWrites),
  };
}

/** A good task: every request followed by a settled text, so each one is final and counted. */
export function goodTaskMessages(firstTs: number, requests: readonly Counts[]): Json[] {
  const out: Json[] = [{ ts: firstTs, type: "say", say: "task", text: "do it", modelInfo: ANTHROPIC }];
  requests.forEach((c, i) => {
    const ts = firstTs + 10 * (i + 1);
    out.push(requestEntry(String(ts), countTexts(c), `request ${i}: "quoted" \\ C:\\dir \u00e9 \u2603`));
    out.push({ ts: ts + 1, type: "say", say: "text", text: "ok", modelInfo: ANTHROPIC, partial: false });
  });
  return out;
}

export function sumCounts(cs: readonly Counts[]): Counts {
  const s = { tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0 };
  for (const c of cs) for (const f of COUNT_FIELDS) s[f] += c[f];
  return s;
}

/**
 * A request text of at least `bytes` bytes (UTF-8) as the file holds it (escaped twice: once as
 * the inner document's string, once as the outer `text` string), built by repeating one escaped
 * chunk: JSON.stringify of a 60 MB string twice costs seconds a CI run need not spend.
 */
export function hugeRequestText(chunk: string, bytes: number): Buffer {
  const once = JSON.stringify(JSON.stringify(chunk).slice(1, -1)).slice(1, -1);
  const unit = Buffer.from(once);
  return Buffer.alloc(Math.ceil(bytes / Buffer.byteLength(chunk)) * unit.length, unit);
}
