export type ScanErrorCode = "truncated" | "syntax" | "io" | "not-a-file" | "empty";

/**
 * Why a scan failed. Messages carry positions and codes only, never document bytes:
 * an error must not become a side channel for the content the scanner skips.
 */
export class ScanError extends Error {
  override readonly name = "ScanError";
  readonly code: ScanErrorCode;
  /** Byte offset where it went wrong (0 for io / not-a-file / empty). */
  readonly offset: number;
  /** The file path, "" for buffers. */
  readonly path: string;

  constructor(
    code: ScanErrorCode,
    offset: number,
    path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${code} at byte ${offset}${path === "" ? "" : ` of ${path}`}: ${detail}`, options);
    this.code = code;
    this.offset = offset;
    this.path = path;
  }
}
