/**
 * A pass hands the event loop a turn every YIELD_EVERY_MS of work. Reading in this thread (the
 * document worker is off below 4 cores) awaits only settled promises, so without a turn no timer,
 * signal or socket callback runs until the whole pass is done: a backfill of 30,000 sessions held a
 * SIGTERM for 8 s, and would hold a Prometheus scrape or the export timer as long. At 25 ms apart
 * the turns cost under 1 % of the pass: +25 ms of main thread in a 2.9 s backfill of 10,000
 * sessions (docs/performance.md, "Memory at 30,000 sessions, and a pass that gives the loop a turn").
 */
export const YIELD_EVERY_MS = 25;

/** Whether a turn is due, `sinceMs` after the last one. */
export function turnDue(sinceMs: number, everyMs: number = YIELD_EVERY_MS): boolean {
  return sinceMs >= everyMs;
}

const checkPhase = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A turn of the event loop: resolves two check phases on, so whatever phase it is called from, a
 * timers phase (due timers) and a poll phase (I/O, signals) have run before it does. One
 * setImmediate, called from a timer's callback, would resolve before the next timers phase.
 */
export async function loopTurn(): Promise<void> {
  await checkPhase();
  await checkPhase();
}
