/**
 * User price files: JSON that overrides or adds prices (format in docs/prices.md).
 *
 *   { "prices": { "<provider or *>": { "<model>": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75 } } } }
 *
 * Every problem is reported with the file, line and column it is on; all problems in a file are
 * reported at once (a syntax error stops parsing, so it is reported alone).
 */
import { readFileSync } from "node:fs";
import { type JsonNode, JsonSyntaxError, lineColumn, parseJsonWithOffsets } from "./json-locate.ts";
import type { Price } from "./prices.ts";

/** provider (or "*") -> model -> price. */
export type PriceOverrides = ReadonlyMap<string, ReadonlyMap<string, Price>>;

export interface PriceFileIssue {
  readonly path: string;
  /** 1-based; absent when the file could not be read at all. */
  readonly line?: number;
  readonly column?: number;
  readonly message: string;
}

export type PriceFileResult =
  | { readonly ok: true; readonly overrides: PriceOverrides }
  | { readonly ok: false; readonly issues: readonly PriceFileIssue[] };

/** `path:line:column: message`, the form editors and terminals link to. */
export function formatIssue(issue: PriceFileIssue): string {
  const at = issue.line === undefined ? "" : `:${issue.line}:${issue.column ?? 1}`;
  return `${issue.path}${at}: ${issue.message}`;
}

export class PriceFileError extends Error {
  override readonly name = "PriceFileError";
  constructor(
    readonly path: string,
    readonly issues: readonly PriceFileIssue[],
  ) {
    super(
      issues.length === 1 && issues[0]
        ? `invalid price file: ${formatIssue(issues[0])}`
        : `invalid price file ${path} (${issues.length} problems):\n${issues.map((i) => `  ${formatIssue(i)}`).join("\n")}`,
    );
  }
}

const PRICE_KEYS = ["input", "output", "cacheRead", "cacheWrite"] as const;
type PriceKey = (typeof PRICE_KEYS)[number];
const REQUIRED: readonly PriceKey[] = ["input", "output"];

const kindName = (n: JsonNode): string =>
  n.kind === "object" ? "an object" : n.kind === "array" ? "an array" : n.kind;

/** Parses and validates a price file's text. `path` is used in messages only. */
export function parsePriceFile(text: string, path: string): PriceFileResult {
  // Editors do not show a BOM, so columns are counted without it.
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const issues: PriceFileIssue[] = [];
  const issue = (offset: number, message: string): void => {
    issues.push({ path, ...lineColumn(src, offset), message });
  };

  let root: JsonNode;
  try {
    root = parseJsonWithOffsets(src);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    return {
      ok: false,
      issues: [{ path, ...lineColumn(src, err.offset), message: `invalid JSON: ${err.message}` }],
    };
  }

  /** Object entries with duplicate keys reported; undefined (and an issue) when not an object. */
  const objectEntries = (node: JsonNode, what: string) => {
    if (node.kind !== "object") {
      issue(node.offset, `${what} must be an object, got ${kindName(node)}`);
      return undefined;
    }
    const seen = new Set<string>();
    return node.entries.filter((e) => {
      if (seen.has(e.key)) {
        issue(e.keyOffset, `duplicate key ${JSON.stringify(e.key)} in ${what}`);
        return false;
      }
      seen.add(e.key);
      return true;
    });
  };

  const overrides = new Map<string, Map<string, Price>>();
  const top = objectEntries(root, "the file");
  if (top) {
    for (const e of top) {
      if (e.key !== "prices") issue(e.keyOffset, `unknown key ${JSON.stringify(e.key)} (expected "prices")`);
    }
    const prices = top.find((e) => e.key === "prices");
    if (!prices) issue(root.offset, 'missing "prices"');
    for (const p of (prices && objectEntries(prices.value, '"prices"')) ?? []) {
      if (p.key === "") {
        issue(p.keyOffset, 'empty provider id (use "*" for any provider)');
        continue;
      }
      const row = new Map<string, Price>();
      for (const m of objectEntries(p.value, `provider ${JSON.stringify(p.key)}`) ?? []) {
        if (m.key === "") {
          issue(m.keyOffset, `empty model id under provider ${JSON.stringify(p.key)}`);
          continue;
        }
        const price = parsePrice(m.value, `${p.key}/${m.key}`, objectEntries, issue);
        if (price) row.set(m.key, price);
      }
      overrides.set(p.key, row);
    }
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, overrides };
}

function parsePrice(
  node: JsonNode,
  name: string,
  objectEntries: (
    node: JsonNode,
    what: string,
  ) => readonly { key: string; keyOffset: number; value: JsonNode }[] | undefined,
  issue: (offset: number, message: string) => void,
): Price | undefined {
  const entries = objectEntries(node, `the price of ${name}`);
  if (!entries) return undefined;
  const values: Partial<Record<PriceKey, number>> = {};
  let valid = true;
  for (const e of entries) {
    const key = PRICE_KEYS.find((k) => k === e.key);
    if (key === undefined) {
      issue(
        e.keyOffset,
        `unknown key ${JSON.stringify(e.key)} in the price of ${name} (expected ${PRICE_KEYS.join(", ")})`,
      );
      valid = false;
      continue;
    }
    const v = e.value;
    if (v.kind !== "number") {
      issue(v.offset, `"${key}" of ${name} must be a number (USD per million tokens), got ${kindName(v)}`);
      valid = false;
    } else if (!Number.isFinite(v.value)) {
      issue(v.offset, `"${key}" of ${name} must be a finite number`);
      valid = false;
    } else if (v.value < 0) {
      issue(v.offset, `"${key}" of ${name} must not be negative, got ${v.value}`);
      valid = false;
    } else {
      values[key] = v.value;
    }
  }
  for (const k of REQUIRED) {
    if (!entries.some((e) => e.key === k)) {
      issue(node.offset, `the price of ${name} is missing "${k}" (input and output are required)`);
      valid = false;
    }
  }
  if (!valid || values.input === undefined || values.output === undefined) return undefined;
  return Object.freeze({
    input: values.input,
    output: values.output,
    ...(values.cacheRead === undefined ? {} : { cacheRead: values.cacheRead }),
    ...(values.cacheWrite === undefined ? {} : { cacheWrite: values.cacheWrite }),
  });
}

/** Reads and validates a price file; throws PriceFileError naming the file, line and problem. */
export function loadPriceFile(path: string): PriceOverrides {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new PriceFileError(path, [{ path, message: `cannot read: ${(err as Error).message}` }]);
  }
  const result = parsePriceFile(text, path);
  if (!result.ok) throw new PriceFileError(path, result.issues);
  return result.overrides;
}
