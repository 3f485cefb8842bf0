export type LogLevel = "error" | "warn" | "info" | "debug";

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
}

/** Line-oriented logger on stderr (stdout stays clean for `report --json`). */
export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const at = (l: LogLevel) => (msg: string) => {
    if (RANK[l] <= RANK[level]) write(`${new Date().toISOString()} ${l.padEnd(5)} ${msg}\n`);
  };
  return { error: at("error"), warn: at("warn"), info: at("info"), debug: at("debug") };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} };
