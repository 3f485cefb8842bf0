/**
 * `cline.client` of an SDK session (Cline CLI 3.x, the VS Code extension's SDK bundle, ...): from
 * the session's `source` (sessions.db's `source` column, or the sidecar's), docs/cline-format.md §5.3.
 * It labels every metric series, so it is one of a closed set, never the raw text.
 */
import type { Problem } from "../types.ts";

/** The SDK's built-in session sources (docs/cline-format.md §5.3), kept as they are. */
export const KNOWN_SOURCES: ReadonlySet<string> = new Set([
  "cli",
  "vscode",
  "jetbrains",
  "neovim",
  "ide",
  "desktop",
  "kanban",
  "web",
  "api",
  "enterprise",
  "core",
  "subagent",
  "unknown",
]);

/** `cline.client` when the session says nothing: only the CLI wrote sessions without a source. */
export const CLI_CLIENT = "cli";

/** `cline.client` of a source outside KNOWN_SOURCES. */
export const UNKNOWN_CLIENT = "unknown";

/** How much of an unexpected source a problem line shows, after sanitizing. */
const SHOWN_CHARS = 32;

export interface ClientOf {
  readonly client: string;
  /** The unexpected source, sanitized and bounded, when `client` is UNKNOWN_CLIENT because of it. */
  readonly unexpected?: string;
}

/**
 * A session's `source` as `cline.client`: a known value lower-cased, `cli` when empty or missing
 * (the CLI is the only writer that predates the field), anything else `unknown`, with the value
 * (sanitized, bounded) for a problem line.
 */
export function clientOfSource(source: string | null | undefined): ClientOf {
  const s = (source ?? "").trim().toLowerCase();
  if (s === "") return { client: CLI_CLIENT };
  if (KNOWN_SOURCES.has(s)) return { client: s };
  const shown = s.slice(0, SHOWN_CHARS).replace(/[^a-z0-9._-]/g, "?");
  return { client: UNKNOWN_CLIENT, unexpected: s.length > SHOWN_CHARS ? `${shown}...` : shown };
}

/**
 * clientOfSource over one discovery, reporting each unexpected source once (with how many
 * sessions had it), not once per document.
 */
export function clientNamer(): {
  of(source: string | null | undefined, sessionId: string): string;
  problems(path: string): Problem[];
} {
  const unexpected = new Map<string, { sessions: number; first: string }>();
  return {
    of(source, sessionId) {
      const c = clientOfSource(source);
      if (c.unexpected !== undefined) {
        const u = unexpected.get(c.unexpected);
        if (u === undefined) unexpected.set(c.unexpected, { sessions: 1, first: sessionId });
        else u.sessions++;
      }
      return c.client;
    },
    problems(path) {
      return [...unexpected].map(([value, u]) => ({
        path,
        code: "unknown-session-source",
        detail: `source "${value}" (session ${u.first} and ${u.sessions - 1} more documents) is not a known Cline client: counted as cline.client "${UNKNOWN_CLIENT}"`,
      }));
    },
  };
}
