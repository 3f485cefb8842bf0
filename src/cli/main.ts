#!/usr/bin/env node
import { Command } from "commander";
import { describeError, exitCodeFor } from "./common.ts";
import { packageVersion } from "./version.ts";

/**
 * Each command's module, loaded when it runs (`cline-otel paths` loads neither `report` nor
 * `run`: each ESM module costs start-up time) or when help lists them all. In help's order.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  report: async () => (await collecting(import("./report.ts"))).reportCommand(),
  paths: async () => (await import("./paths.ts")).pathsCommand(),
  run: async () => (await collecting(import("./run.ts"))).runCommand(),
};

/**
 * A command that collects or exports also gets the heap policy (V8 heap growth kept close to the
 * live heap: the peak RSS of a backfill or a first export is otherwise ~4x what is live,
 * src/util/heap.ts); `paths`, `--help` and `--version` do not pay for node:v8 at start-up.
 */
async function collecting<T>(command: Promise<T>): Promise<T> {
  const [{ applyHeapPolicy }, loaded] = await Promise.all([import("../util/heap.ts"), command]);
  applyHeapPolicy();
  return loaded;
}

/**
 * The program with every command, or only `only` when it names one (the command line's first
 * word): its options, errors and help are the same either way.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command("cline-otel")
    .description("OpenTelemetry metrics for the Cline CLI: tokens, cache, cost and tool use")
    .version(packageVersion())
    .exitOverride();
  const names = only !== undefined && Object.hasOwn(COMMANDS, only) ? [only] : Object.keys(COMMANDS);
  const commands = await Promise.all(names.map((n) => (COMMANDS[n] as () => Promise<Command>)()));
  for (const c of commands) program.addCommand(c);
  return program;
}

async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(argv[2]);
    await program.parseAsync(argv);
    // A command may choose its own success-path code (report --budget: 3 when over budget).
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (typeof code === "string" && code.startsWith("commander.")) {
      // commander already printed its message; help/version are not errors.
      return code === "commander.helpDisplayed" || code === "commander.version" || code === "commander.help"
        ? 0
        : 2;
    }
    process.stderr.write(`${describeError(e)}\n`);
    return exitCodeFor(e);
  }
}

/**
 * A reader that stops early (`cline-otel report | head`) closes the pipe: what it did not read is
 * dropped and the command ends with its own exit code, as a Unix filter does, instead of an
 * unhandled EPIPE stack. Anything else failing on stdout is still an error.
 */
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
});
process.exitCode = await main(process.argv);
