/**
 * A pass hands the event loop a turn every YIELD_EVERY_MS of work. Reading in this thread (the
 * document worker is off below 4 cores) awaits only settled promises, so without a turn no timer,
 * signal or socket callback runs until the whole pass is done: a backfill of 30,000 sessions held a
 * SIGTERM for 8 s, and would hold a Prometheus scrape or the export timer as long. A turn through
 * setImmediate runs one loop iteration (timers, I/O, signal handlers) and costs ~20 µs: at 25 ms
 * apart, under 0.1 % of the pass (docs/performance.md, "A pass gives the loop a turn").
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
