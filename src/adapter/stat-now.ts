/**
 * A stat for the checks that only ask "is it as it was" (the gate's unchangedNow, the quiet
 * discovery, the quiet tree, the held walk). Its own module, importing only node:fs, so the quiet
 * paths load nothing of the scanner (the `paths` command's start-up, test/bench/startup.test.ts).
 */
import { type Stats, statSync } from "node:fs";

const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/**
 * A stat now, or undefined when the file is gone or cannot be stat-ed (an errno error): the callers
 * then take the path that stats it again and reports the failure. Anything else (a bug) is thrown.
 */
export function statNow(path: string): Stats | undefined {
  try {
    return statSync(path, MAY_BE_GONE);
  } catch (e) {
    // A system error carries the errno; Node's own ERR_* (a bad argument: a bug) has a code but none.
    if (typeof (e as NodeJS.ErrnoException).errno !== "number") throw e;
    return undefined;
  }
}
