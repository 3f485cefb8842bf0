import type { ScanError } from "../scan/scanner.ts";
import type { Observation, Source } from "./types.ts";

/** A source that could not be read whole: retried next pass, with a stable problem code. */
export function failedObservation(source: Source, code: string, detail: string): Observation {
  return { status: "failed", source, problem: { path: source.path, code, detail } };
}

/**
 * A scan's failure as an observation: a torn or empty document (a write under way) is
 * `partial-document`, a file gone is `vanished`, other I/O `unreadable`; the scanner's own code else.
 */
export function scanFailed(source: Source, e: ScanError): Observation {
  const code =
    e.code === "truncated" || e.code === "syntax" || e.code === "empty"
      ? "partial-document"
      : e.code === "io" && /ENOENT/.test(e.message)
        ? "vanished"
        : e.code === "io"
          ? "unreadable"
          : e.code;
  return failedObservation(source, code, e.message);
}
