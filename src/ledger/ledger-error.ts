/** A ledger problem the user must act on; the message names the file and the fix. */
export class LedgerError extends Error {
  constructor(
    message: string,
    readonly code: "locked" | "corrupt" | "too-new" | "too-old" | "io",
  ) {
    super(message);
    this.name = "LedgerError";
  }
}
