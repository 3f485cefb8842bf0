#!/usr/bin/env node
import { Command } from "commander";
import { describeError, exitCodeFor } from "./common.ts";
import { pathsCommand } from "./paths.ts";
import { reportCommand } from "./report.ts";
import { packageVersion, runCommand } from "./run.ts";

export function buildProgram(): Command {
  const program = new Command("cline-otel")
    .description("OpenTelemetry metrics for the Cline CLI: tokens, cache, cost and tool use")
    .version(packageVersion())
    .exitOverride();
  program.addCommand(reportCommand());
  program.addCommand(pathsCommand());
  program.addCommand(runCommand());
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
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

process.exitCode = await main(process.argv);
