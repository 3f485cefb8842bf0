/**
 * A list option that takes its values as separate words (`--by client model`), as a comma list
 * (`--by client,model`, as the OTel variables and CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES are written),
 * or both; every name is checked against its choices and a bad one is named (issue 28). Commander's
 * `.choices()` checks a word whole, so `client,model` was refused as one invalid argument.
 */
import { InvalidArgumentError, Option } from "commander";

/** The argParser of a variadic option: splits each word at commas, checks each name, accumulates. */
export function choiceListParser<T extends string>(
  choices: readonly T[],
  what: string,
): (value: string, previous: readonly T[] | undefined) => T[] {
  return (value, previous) => {
    const names = value
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    if (names.length === 0)
      throw new InvalidArgumentError(`no ${what} given; choose from ${choices.join(", ")}.`);
    const bad = names.filter((n) => !(choices as readonly string[]).includes(n));
    if (bad.length > 0)
      throw new InvalidArgumentError(
        `${bad.map((b) => `'${b}'`).join(", ")} ${bad.length === 1 ? "is not a" : "are not"} ${what}${bad.length === 1 ? "" : "s"}; choose from ${choices.join(", ")} (separate words or a comma list).`,
      );
    // A new array: `previous` may be the option's default, shared between parses.
    return [...(previous ?? []), ...(names as T[])];
  };
}

/** `--flag <name...>` taking separate words, comma lists or both, each one of `choices`. */
export function choiceListOption<T extends string>(
  flags: string,
  description: string,
  choices: readonly T[],
  what: string,
): Option {
  return new Option(flags, `${description} (choices: ${choices.join(", ")}; separate words or a comma list)`)
    .argParser(choiceListParser(choices, what))
    .default([]);
}
