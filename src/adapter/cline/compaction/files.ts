import { basename, dirname, join } from "node:path";

/**
 * Which files of a Cline session folder are what (docs/cline-format.md §3, 14; docs/design.md "Context
 * compaction"). The one rule that matters for accounting: usage comes ONLY from
 * `<id>.messages.json`. `<id>.compaction.json` repeats preserved assistant messages with their
 * `metrics` (agentic) or carries the running total `usageBefore` (basic): reading it as a usage
 * source would count tokens twice.
 */
export const MESSAGES_SUFFIX = ".messages.json";
export const COMPACTION_SUFFIX = ".compaction.json";

/** True only for a `*.messages.json` file: the single source of usage events. */
export function isUsageSource(path: string): boolean {
  const name = basename(path);
  return name.endsWith(MESSAGES_SUFFIX) && name.length > MESSAGES_SUFFIX.length && !isCompactionFile(path);
}

/** `<stem>.compaction.json`: read only for the compaction counter, never for usage. */
export function isCompactionFile(path: string): boolean {
  const name = basename(path);
  return name.endsWith(COMPACTION_SUFFIX) && name.length > COMPACTION_SUFFIX.length;
}

/** The compaction file next to a messages document (`<dir>/<stem>.compaction.json`). */
export function compactionPathFor(messagesPath: string): string {
  const name = basename(messagesPath);
  const stem = name.endsWith(MESSAGES_SUFFIX) ? name.slice(0, -MESSAGES_SUFFIX.length) : name;
  return join(dirname(messagesPath), `${stem}${COMPACTION_SUFFIX}`);
}

/** The messages document a compaction file belongs to (its session and agent identity). */
export function messagesPathFor(compactionPath: string): string {
  const name = basename(compactionPath);
  const stem = name.endsWith(COMPACTION_SUFFIX) ? name.slice(0, -COMPACTION_SUFFIX.length) : name;
  return join(dirname(compactionPath), `${stem}${MESSAGES_SUFFIX}`);
}
