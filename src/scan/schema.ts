/**
 * Allow-list schemas for the streaming scanner. A schema names the only fields that
 * are ever decoded into JS values; everything else in a document is skipped as bytes.
 */

export type Schema =
  | StringSchema
  | NumberSchema
  | BooleanSchema
  | ObjectSchema
  | ArraySchema
  | EnumSchema
  | EmbeddedSchema
  | RawSchema
  | ShapeSchema
  | PhrasesSchema;

export interface StringSchema {
  readonly kind: "string";
  /** Strings longer than this many raw (still escaped) bytes are not decoded: `{wrongType:"too-long"}`. */
  readonly maxBytes: number;
}

export interface NumberSchema {
  readonly kind: "number";
}

/** A `true` / `false` literal (flags such as a tool result's `is_error`). */
export interface BooleanSchema {
  readonly kind: "boolean";
}

/** `F` is generic so that `Scanned` can see the field names of a schema built with `obj()`. */
export interface ObjectSchema<F extends Readonly<Record<string, Schema>> = Readonly<Record<string, Schema>>> {
  readonly kind: "object";
  readonly fields: F;
  /** The field names as the scanner matches them, built once with the schema (`obj()`). */
  readonly compiled?: CompiledFields;
}

export interface ArraySchema<I extends Schema = Schema> {
  readonly kind: "array";
  readonly items: I;
}

/**
 * A string decoded only when its bytes spell one of `values`: the result is that constant, never
 * a copy of the document's bytes; anything else is `{wrongType:"unlisted"}`. For fields that may
 * hold content where a known name is expected (a tool name inside free-form JSON).
 */
export interface EnumSchema<V extends string = string> {
  readonly kind: "enum";
  readonly values: readonly V[];
  /** The values as the scanner matches them, built once with the schema (`oneOf()`). */
  readonly compiled?: CompiledFields;
}

/** An object's field names (or an enum's values) as the scanner matches raw key bytes against them. */
export interface CompiledFields {
  readonly names: readonly string[];
  readonly bytes: readonly Uint8Array[];
  readonly schemas: readonly Schema[];
  /** Longest raw key that could still unescape to a field name (`\u00XX` is 6 bytes for 1). */
  readonly maxRaw: number;
}

/**
 * Compiles what the scanner matches keys against. `obj()` and `oneOf()` do it once per schema: a
 * scan used to do it per document (~50 µs each, ~4 % of a cold backfill of small sessions).
 */
export function compileFields(schema: ObjectSchema | EnumSchema): CompiledFields {
  const names = schema.kind === "enum" ? [...schema.values] : Object.keys(schema.fields);
  const bytes = names.map((n) => Buffer.from(n, "utf8"));
  const schemas = schema.kind === "enum" ? [] : names.map((n) => schema.fields[n] as Schema);
  let maxLen = 0;
  for (const b of bytes) maxLen = Math.max(maxLen, b.length);
  return Object.freeze({ names, bytes, schemas, maxRaw: maxLen * 6 });
}

/**
 * A string whose content is itself a JSON document (a "string inside a string"), scanned with
 * `inner` as it is crossed: its unescaped bytes feed a nested scan, so the string never becomes
 * a JS string. Content that is not one JSON object decodes to `{wrongType:"not-json"}`.
 */
export interface EmbeddedSchema<I extends ObjectSchema = ObjectSchema, F extends boolean = boolean> {
  readonly kind: "embedded";
  readonly inner: I;
  /**
   * When > 0, a string that is NOT one JSON object (a command line, prose) decodes to its raw
   * escaped bytes (`RawBytes`, as a `raw` field) instead of `not-json`, if it is at most this many
   * bytes: one field that holds JSON in some messages and a plain text in others (the task
   * format's `text`). The bytes are copied while the nested scan runs, never decoded.
   */
  readonly rawFallback: number;
  /**
   * The raw fallback only for a string whose object has, BEFORE it, one of these fields decoded to
   * one of these values (the task format's `say`/`ask: "command"`): other texts that are not JSON
   * (prose) are then not copied at all. A field that comes after the string is not seen.
   */
  readonly rawFallbackIf?: Readonly<Record<string, readonly string[]>>;
  /** Type-level only: whether `rawFallback` is set. */
  readonly fallback?: F;
}

/**
 * A string that is skipped, while its raw (still escaped) bytes are searched for fixed phrases
 * (phrases.ts): the result is where each phrase occurs, never a byte of the content. A phrase
 * must be printable ASCII without `"` or `\` and must not start with a letter an escape could
 * end in, so it is spelled the same in the raw bytes at any escaping depth.
 */
export interface PhrasesSchema {
  readonly kind: "phrases";
  readonly values: readonly string[];
  /**
   * Phrases (by index) that matter only right after another one: searched only in the `within`
   * bytes after each occurrence of `anchor` (and across chunk boundaries), not in the whole text.
   */
  readonly near?: PhrasesNear;
  /** The phrases' bytes, made once with the schema (a scan starts one search per string). */
  readonly needles: readonly Uint8Array[];
}

export interface PhrasesNear {
  readonly anchor: number;
  readonly within: number;
  readonly phrases: readonly number[];
}

/**
 * A string whose content is handed out as its RAW bytes, still escaped, never decoded: a copy of
 * them in a Buffer (`RawBytes`), for byte-level readers (line counts, phrases, a path's extension:
 * src/scan's text readers) that must not make a JS string of content. Longer than `maxBytes`:
 * `{wrongType:"too-long"}`. Inside an `embedded` string the bytes are those of the inner document
 * (unescaped once by the nested scan).
 */
export interface RawSchema {
  readonly kind: "raw";
  readonly maxBytes: number;
  /** A longer string gives its first `maxBytes` raw bytes (`truncated`) instead of `too-long`. */
  readonly prefix: boolean;
  /**
   * Inside an `embedded` string: handed out as the OUTER string's raw bytes (escaped twice, `depth: 2`
   * on the value), crossed like a skipped inner string (embedded-skip.ts) instead of unescaped and
   * copied: for long texts read only by depth-aware byte readers (an edit's content). `maxBytes` then
   * counts those outer bytes. Elsewhere it is a plain `raw`.
   */
  readonly outer: boolean;
}

/** What a `raw` field decodes to: the raw content bytes `buf[start..end)` (a copy, owned by the caller). */
export interface RawBytes {
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number;
  /** Only the first bytes of a longer string (a `prefix` schema). */
  readonly truncated: boolean;
  /** 2: the bytes are those of the outer string around an embedded document (an `outer` schema). */
  readonly depth?: 2;
}

/**
 * A value that may be stored in more than one shape (Cline CLI 3.x's `tool_result.content` is an
 * array of objects for most tools and a JSON string for others): the schema of the shape met
 * is applied; any other shape is a WrongType as usual.
 */
export interface ShapeSchema<S extends Schema = Schema, A extends ArraySchema = ArraySchema> {
  readonly kind: "shape";
  readonly string: S;
  readonly array: A;
}

/**
 * What a `phrases` string decodes to: per occurrence, in order, the phrase's index in `values`
 * and the raw byte offset of its first byte from the start of the string's content.
 */
export interface PhraseHits {
  readonly phrase: readonly number[];
  readonly at: readonly number[];
  /** More occurrences than MAX_PHRASE_HITS: the rest were not recorded. */
  readonly truncated: boolean;
}

export const DEFAULT_STRING_MAX_BYTES = 1024;

export function str(maxBytes: number = DEFAULT_STRING_MAX_BYTES): StringSchema {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`str(): maxBytes must be a non-negative integer, got ${maxBytes}`);
  }
  return Object.freeze({ kind: "string", maxBytes });
}

export const num: NumberSchema = Object.freeze({ kind: "number" });

export const bool: BooleanSchema = Object.freeze({ kind: "boolean" });

export function obj<F extends Record<string, Schema>>(fields: F): ObjectSchema<Readonly<F>> {
  const plain = { kind: "object" as const, fields: Object.freeze({ ...fields }) };
  return Object.freeze({ ...plain, compiled: compileFields(plain) });
}

export function oneOf<const V extends string>(values: readonly V[]): EnumSchema<V> {
  if (values.length === 0) throw new RangeError("oneOf(): at least one value");
  const plain = { kind: "enum" as const, values: Object.freeze([...values]) };
  return Object.freeze({ ...plain, compiled: compileFields(plain) });
}

export function embedded<I extends ObjectSchema>(inner: I): EmbeddedSchema<I, false>;
export function embedded<I extends ObjectSchema>(inner: I, opts: EmbeddedOptions): EmbeddedSchema<I, true>;
export function embedded<I extends ObjectSchema>(inner: I, opts?: EmbeddedOptions): EmbeddedSchema<I> {
  const rawFallback = opts?.rawFallback ?? 0;
  if (!Number.isSafeInteger(rawFallback) || rawFallback < 0)
    throw new RangeError(`embedded(): rawFallback must be a non-negative integer, got ${rawFallback}`);
  const when = opts?.rawFallbackIf;
  if (when === undefined) return Object.freeze({ kind: "embedded", inner, rawFallback });
  if (rawFallback === 0) throw new RangeError("embedded(): rawFallbackIf without a rawFallback");
  const rawFallbackIf = Object.freeze(
    Object.fromEntries(Object.entries(when).map(([k, v]) => [k, Object.freeze([...v])])),
  );
  return Object.freeze({ kind: "embedded", inner, rawFallback, rawFallbackIf });
}

export interface EmbeddedOptions {
  readonly rawFallback: number;
  readonly rawFallbackIf?: Readonly<Record<string, readonly string[]>>;
}

export function phrases<const V extends string>(values: readonly V[], near?: PhrasesNear): PhrasesSchema {
  if (values.length === 0) throw new RangeError("phrases(): at least one phrase");
  for (const v of values) {
    // Spelled alike at every escaping depth: no byte a writer escapes, no leading escape letter.
    if (!/^[\x20-\x7e]+$/.test(v) || /["\\]/.test(v) || /^[bfnrtu/]/.test(v))
      throw new RangeError(`phrases(): ${JSON.stringify(v)} cannot be matched in raw bytes`);
  }
  if (near !== undefined) {
    const ok = (i: number) => Number.isInteger(i) && i >= 0 && i < values.length;
    if (!ok(near.anchor) || !near.phrases.every((i) => ok(i) && i !== near.anchor) || near.within < 0)
      throw new RangeError("phrases(): `near` names phrases that are not in the list");
    const n = Object.freeze({ ...near, phrases: Object.freeze([...near.phrases]) });
    return Object.freeze({
      kind: "phrases",
      values: Object.freeze([...values]),
      near: n,
      needles: needlesOf(values),
    });
  }
  return Object.freeze({ kind: "phrases", values: Object.freeze([...values]), needles: needlesOf(values) });
}

function needlesOf(values: readonly string[]): readonly Uint8Array[] {
  return Object.freeze(values.map((v) => new Uint8Array(Buffer.from(v, "latin1"))));
}

export function raw(
  maxBytes: number,
  opts: { readonly prefix?: boolean; readonly outer?: boolean } = {},
): RawSchema {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`raw(): maxBytes must be a non-negative integer, got ${maxBytes}`);
  }
  if (opts.prefix === true && opts.outer === true)
    throw new RangeError("raw(): `prefix` and `outer` exclude each other");
  return Object.freeze({ kind: "raw", maxBytes, prefix: opts.prefix === true, outer: opts.outer === true });
}

/** `string`: applied to a string value (a `str`, `raw`, `oneOf` or `embedded` schema); `array`: to an array. */
export function shape<S extends Schema, A extends ArraySchema>(alts: {
  readonly string: S;
  readonly array: A;
}): ShapeSchema<S, A> {
  return Object.freeze({ kind: "shape", string: alts.string, array: alts.array });
}

export function arr<I extends Schema>(items: I): ArraySchema<I> {
  return Object.freeze({ kind: "array", items });
}

export type WrongTypeKind =
  | "string"
  | "number"
  | "object"
  | "array"
  | "boolean"
  | "null"
  | "too-long"
  | "unlisted"
  | "not-json";

/** What a value decodes to when it does not have the schema's type (or a string is longer than maxBytes). */
export interface WrongType {
  readonly wrongType: WrongTypeKind;
}

export type Scanned<S extends Schema> =
  S extends ShapeSchema<infer SS, infer SA> ? ScannedOne<SS> | ScannedOne<SA> | WrongType : ScannedOne<S>;

/** Every kind but `shape` (its own step: TypeScript's instantiation depth). */
type ScannedOne<S extends Schema> = S extends StringSchema
  ? string | WrongType
  : S extends NumberSchema
    ? number | WrongType
    : S extends BooleanSchema
      ? boolean | WrongType
      : S extends ObjectSchema<infer F>
        ? { -readonly [K in keyof F]?: F[K] extends Schema ? Scanned<F[K]> : never } | WrongType
        : S extends ArraySchema<infer I>
          ? Scanned<I>[] | WrongType
          : S extends EnumSchema<infer V>
            ? V | WrongType
            : S extends EmbeddedSchema<infer I, infer F>
              ? Scanned<I> | (F extends true ? RawBytes : never) | WrongType
              : S extends RawSchema
                ? RawBytes | WrongType
                : S extends PhrasesSchema
                  ? PhraseHits | WrongType
                  : never;

/**
 * A non-enumerable brand, so a decoded object that happens to have an allow-listed
 * field called `wrongType` is never mistaken for a WrongType marker.
 */
const WRONG_TYPE_BRAND: unique symbol = Symbol("cline-otel.scan.wrongType");

function makeWrongType(kind: WrongTypeKind): WrongType {
  const v = { wrongType: kind };
  Object.defineProperty(v, WRONG_TYPE_BRAND, { value: true, enumerable: false });
  return Object.freeze(v);
}

/** Shared, frozen markers: one per kind (they carry no data, so sharing is safe). */
export const WRONG: Readonly<Record<WrongTypeKind, WrongType>> = Object.freeze({
  string: makeWrongType("string"),
  number: makeWrongType("number"),
  object: makeWrongType("object"),
  array: makeWrongType("array"),
  boolean: makeWrongType("boolean"),
  null: makeWrongType("null"),
  "too-long": makeWrongType("too-long"),
  unlisted: makeWrongType("unlisted"),
  "not-json": makeWrongType("not-json"),
});

export function isWrongType(v: unknown): v is WrongType {
  return typeof v === "object" && v !== null && (v as Record<symbol, unknown>)[WRONG_TYPE_BRAND] === true;
}

/** A WrongType for a problem line, with its article: "an object", "a number", "a too-long". */
export function wrongTypeShown(v: WrongType): string {
  return `${/^[aeiou]/.test(v.wrongType) ? "an" : "a"} ${v.wrongType}`;
}
