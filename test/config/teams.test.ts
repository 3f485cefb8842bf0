import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { DEFAULT_COPY_RESOURCE_ATTRIBUTES, resolveTeamsConfig } from "../../src/config/teams.ts";
import { configErrorOf } from "../helpers/config-error.ts";

const teams = (env: Record<string, string>, flags: { sessionId?: boolean } = {}) =>
  resolveTeamsConfig(flags, env, () => "os-account");

describe("teams configuration", () => {
  it("defaults: the OS account, the team copies, no repository, every metric dimension (session.id too)", () => {
    expect(teams({})).toEqual({
      user: "os-account",
      copyResourceAttributes: DEFAULT_COPY_RESOURCE_ATTRIBUTES,
      repository: false,
      metrics: { sessionId: true, project: true, repository: false, user: true },
    });
    expect(DEFAULT_COPY_RESOURCE_ATTRIBUTES).toEqual(["team.id", "department", "cost_center", "user.name"]);
    expect(Object.isFrozen(teams({}).metrics)).toBe(true);
  });

  it("CLINE_OTEL_USER sets the user; set and empty leaves it out", () => {
    expect(teams({ CLINE_OTEL_USER: " alice " }).user).toBe("alice");
    expect(teams({ CLINE_OTEL_USER: "" }).user).toBeUndefined();
    expect(resolveTeamsConfig({}, {}, () => undefined).user).toBeUndefined();
  });

  it("CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: a comma list, empty for none, keys checked", () => {
    expect(
      teams({ CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: "team.id, cost_center,team.id" }).copyResourceAttributes,
    ).toEqual(["team.id", "cost_center"]);
    expect(teams({ CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: "" }).copyResourceAttributes).toEqual([]);
    expect(configErrorOf(() => teams({ CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: "team.id=x" }))).toMatch(
      /CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES has "team.id=x"/,
    );
  });

  it("OTEL_METRICS_INCLUDE_*: Claude Code's names, the old variable and flag still work", () => {
    expect(teams({ OTEL_METRICS_INCLUDE_SESSION_ID: "true" }).metrics.sessionId).toBe(true);
    expect(teams({ CLINE_OTEL_INCLUDE_SESSION_ID: "true" }).metrics.sessionId).toBe(true);
    expect(teams({ OTEL_METRICS_INCLUDE_SESSION_ID: "false" }).metrics.sessionId).toBe(false);
    expect(teams({}, { sessionId: true }).metrics.sessionId).toBe(true);
    // The team setting: either name turns it off; the flag beats the variable either way.
    expect(teams({ CLINE_OTEL_INCLUDE_SESSION_ID: "false" }).metrics.sessionId).toBe(false);
    expect(teams({}, { sessionId: false }).metrics.sessionId).toBe(false);
    expect(teams({ OTEL_METRICS_INCLUDE_SESSION_ID: "false" }, { sessionId: true }).metrics.sessionId).toBe(
      true,
    );
    expect(
      teams({ OTEL_METRICS_INCLUDE_SESSION_ID: "true", CLINE_OTEL_INCLUDE_SESSION_ID: "false" }).metrics
        .sessionId,
    ).toBe(true);
    expect(teams({ OTEL_METRICS_INCLUDE_SESSION_ID: "true" }, { sessionId: false }).metrics.sessionId).toBe(
      false,
    );
    expect(
      teams({ OTEL_METRICS_INCLUDE_PROJECT: "0", OTEL_METRICS_INCLUDE_USER: "no" }).metrics,
    ).toMatchObject({
      project: false,
      user: false,
    });
    // The repository goes on series only when it is read at all.
    expect(teams({ OTEL_METRICS_INCLUDE_REPOSITORY: "true" }).metrics.repository).toBe(false);
    expect(teams({ CLINE_OTEL_REPOSITORY: "true" }).metrics.repository).toBe(true);
    expect(teams({ CLINE_OTEL_REPOSITORY: "true", OTEL_METRICS_INCLUDE_REPOSITORY: "false" })).toMatchObject({
      repository: true,
      metrics: { repository: false },
    });
    expect(configErrorOf(() => teams({ OTEL_METRICS_INCLUDE_USER: "maybe" }))).toMatch(
      /OTEL_METRICS_INCLUDE_USER/,
    );
  });

  it("resolveConfig carries it, and includeSessionId follows it", () => {
    const c = resolveConfig(
      {},
      { OTEL_METRICS_INCLUDE_SESSION_ID: "false", CLINE_OTEL_USER: "bob" },
      "/home/u",
      "/cwd",
    );
    expect(c.export.includeSessionId).toBe(false);
    expect(c.export.teams.user).toBe("bob");
  });
});
