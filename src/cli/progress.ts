/**
 * A progress bar for long first collections and exports: only on a TTY, never on a pipe, and
 * only redrawn a few times a second.
 */
export function createProgress(
  stream: NodeJS.WriteStream,
  label: string,
  minTotal = 20,
  opts: { unit?: string; now?: () => number } = {},
): { update(done: number, total: number, rate?: number): void; finish(): void } {
  const enabled = stream.isTTY === true;
  const unit = opts.unit ?? "documents";
  const now = opts.now ?? Date.now;
  let last = 0;
  let drawn = false;
  return {
    update(done, total, rate) {
      if (!enabled || total < minTotal) return;
      const t = now();
      if (done !== total && t - last < 100) return;
      last = t;
      const width = 30;
      const filled = Math.round((Math.min(done, total) / total) * width);
      const speed = rate === undefined ? "" : `, ${Math.round(rate)} ${unit}/s`;
      stream.write(
        `\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} ${unit}${speed}`,
      );
      drawn = true;
    },
    finish() {
      if (drawn) stream.write("\n");
      drawn = false;
    },
  };
}
