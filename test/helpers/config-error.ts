import { expect } from "vitest";
import { ConfigError } from "../../src/config/config.ts";

/** The message of the ConfigError `f` throws; fails the test if it throws anything else or nothing. */
export function configErrorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error("expected a ConfigError");
}
