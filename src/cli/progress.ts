/**
 * A progress bar for long first collections: only on a TTY, never on a pipe, and
 * only redrawn a few times a second.
 */
export function createProgress(
  stream: NodeJS.WriteStream,
  label: string,
  minTotal = 20,
): { update(done: number, total: number): void; finish(): void } {
  const enabled = stream.isTTY === true;
  let last = 0;
  let drawn = false;
  return {
    update(done, total) {
      if (!enabled || total < minTotal) return;
      const now = Date.now();
      if (done !== total && now - last < 100) return;
      last = now;
      const width = 30;
      const filled = Math.round((done / total) * width);
      stream.write(
        `\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} documents`,
      );
      drawn = true;
    },
    finish() {
      if (drawn) stream.write("\n");
      drawn = false;
    },
  };
}
