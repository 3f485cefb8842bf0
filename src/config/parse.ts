/**
 * The parsing helpers every config module shares, and the error they throw: below config.ts,
 * otlp.ts, signals.ts and headers-file.ts, so none of them imports another back.
 */

/** Bad configuration: the message names the flag or variable and what it accepts. Exit code 2. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export function oneOf<T extends string>(value: string, accepted: readonly T[], what: string): T {
  const v = value.trim().toLowerCase();
  if ((accepted as readonly string[]).includes(v)) return v as T;
  throw new ConfigError(`${what} is "${value}"; accepted values: ${accepted.join(", ")}`);
}

export function positiveNumber(value: string, what: string, unit: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new ConfigError(`${what} is "${value}"; give a positive number of ${unit}`);
  }
  return n;
}

export function boolValue(value: string, what: string): boolean {
  return (
    oneOf(value, ["true", "false", "1", "0", "yes", "no"] as const, what).match(/^(true|1|yes)$/) !== null
  );
}

/** W3C-baggage-like `k=v,k2=v2` lists (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS). */
export function parseKeyValueList(text: string, what: string, secret = false): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of text.split(",")) {
    if (item.trim() === "") continue;
    const eq = item.indexOf("=");
    if (eq <= 0) {
      // Never echo a header item: it may be an API key.
      const shown = secret ? "an item" : `"${item.trim()}"`;
      throw new ConfigError(`${what} has ${shown} without key=value; use key1=value1,key2=value2`);
    }
    const key = item.slice(0, eq).trim();
    let value = item.slice(eq + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // Not percent-encoded after all: the spec's decoding is best effort, keep the raw text.
    }
    out[key] = value;
  }
  return out;
}
