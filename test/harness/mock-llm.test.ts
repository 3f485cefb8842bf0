import { afterEach, describe, expect, it } from "vitest";
import {
  anthropicStream,
  anthropicWireUsage,
  expectedFromAnthropic,
  expectedFromOpenAi,
  type MockLlm,
  type MockScript,
  markerOf,
  openAiStream,
  openAiWireUsage,
  routeOfMessages,
  startMockLlm,
} from "../../fixtures/harness/mock-llm.ts";

/** The JSON payloads of an SSE body (the `[DONE]` sentinel dropped). */
function sseData(body: string): Record<string, unknown>[] {
  return body
    .split("\n")
    .filter((l) => l.startsWith("data: ") && l !== "data: [DONE]")
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

describe("markerOf / routeOfMessages", () => {
  it("takes the last marker of a text", () => {
    expect(markerOf("a [[mock:x]] b [[mock:y-2]]")).toBe("y-2");
    expect(markerOf("no marker")).toBeUndefined();
  });

  it("routes by the latest user text that has a marker, ignoring assistant and tool content", () => {
    const messages = [
      { role: "system", content: "[[mock:sys]]" },
      { role: "user", content: "first [[mock:r1]]" },
      {
        role: "assistant",
        content: "x",
        tool_calls: [{ function: { arguments: '{"task":"[[mock:sa]]"}' } }],
      },
      { role: "tool", content: "[[mock:tool]]" },
      { role: "user", content: [{ type: "text", text: "second [[mock:r2]]" }] },
      { role: "user", content: [{ type: "tool_result", content: "[[mock:res]]" }] },
    ];
    expect(routeOfMessages(messages)).toBe("r2");
    expect(routeOfMessages(messages.slice(0, 4))).toBe("r1");
    expect(routeOfMessages([{ role: "user", content: "plain" }])).toBe("default");
    expect(routeOfMessages(undefined)).toBe("default");
  });
});

describe("usage mapping (docs/cline-format.md §4.5)", () => {
  it("OpenAI: prompt_tokens includes cached tokens, and inputTokens is prompt_tokens", () => {
    const wire = openAiWireUsage({ input: 100, output: 7, cacheRead: 30 });
    expect(wire).toEqual({
      prompt_tokens: 130,
      completion_tokens: 7,
      total_tokens: 137,
      prompt_tokens_details: { cached_tokens: 30 },
    });
    expect(expectedFromOpenAi(wire)).toEqual({
      inputTokens: 130,
      outputTokens: 7,
      cacheReadTokens: 30,
      cacheWriteTokens: 0,
    });
  });

  it("OpenAI: no details without a cache count; DeepSeek flavour adds hit/miss", () => {
    expect(openAiWireUsage({ input: 5, output: 1 }).prompt_tokens_details).toBeUndefined();
    const ds = openAiWireUsage({ input: 5, output: 1, cacheRead: 3 }, "deepseek");
    expect([ds.prompt_cache_hit_tokens, ds.prompt_cache_miss_tokens]).toEqual([3, 5]);
    expect(() => openAiWireUsage({ input: 5, output: 1, cacheWrite: 2 })).toThrow(/cache-write/);
  });

  it("Anthropic: inputTokens adds both cache counts; output comes from message_delta", () => {
    const wire = anthropicWireUsage({ input: 221, output: 323, cacheRead: 7002, cacheWrite: 729 });
    expect(wire.message_start.output_tokens).toBe(1);
    expect(expectedFromAnthropic(wire)).toEqual({
      inputTokens: 7952,
      outputTokens: 323,
      cacheReadTokens: 7002,
      cacheWriteTokens: 729,
    });
  });
});

describe("stream encoders", () => {
  const ids = { route: "a", turn: 2, model: "m" };

  it("OpenAI: tool calls, finish reason, usage in a final choice-less chunk", () => {
    const wire = openAiWireUsage({ input: 10, output: 2 });
    const chunks = sseData(
      openAiStream(
        { text: "hi", toolCalls: [{ name: "run_commands", input: { commands: ["ls"] } }] },
        wire,
        ids,
      ),
    );
    const last = chunks.at(-1) as { choices: unknown[]; usage: unknown };
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(wire);
    const text = JSON.stringify(chunks);
    expect(text).toContain('"id":"call_mock_a_2_0"');
    expect(text).toContain('"finish_reason":"tool_calls"');
    expect(JSON.stringify(sseData(openAiStream({ text: "x" }, null, ids)))).not.toContain("usage");
  });

  it("Anthropic: usage split between message_start and message_delta, tool input as JSON delta", () => {
    const wire = anthropicWireUsage({ input: 3, output: 44, cacheRead: 5, cacheWrite: 6 });
    const events = sseData(
      anthropicStream(
        { thinking: "t", toolCalls: [{ name: "read_files", input: { files: [] } }] },
        wire,
        ids,
      ),
    );
    const start = events[0] as { message: { usage: unknown } };
    expect(start.message.usage).toEqual(wire.message_start);
    const delta = events.find((e) => e.type === "message_delta") as { usage: unknown; delta: unknown };
    expect(delta.usage).toEqual({ output_tokens: 44 });
    expect(delta.delta).toMatchObject({ stop_reason: "tool_use" });
    expect(events.map((e) => e.type)).toContain("content_block_start");
    expect(events.at(-1)?.type).toBe("message_stop");
  });
});

describe("startMockLlm", () => {
  let mock: MockLlm | undefined;
  afterEach(async () => {
    await mock?.close();
    mock = undefined;
  });

  const script: MockScript = {
    routes: {
      a: [
        { kind: "reply", text: "one", usage: { input: 11, output: 3, cacheRead: 2 } },
        { kind: "reply", text: "two", usage: null },
        { kind: "http-error", status: 400, message: "boom" },
      ],
      b: [{ kind: "reply", text: "b", usage: { input: 7, output: 5, cacheRead: 1, cacheWrite: 4 } }],
    },
  };

  const post = (path: string, text: string) =>
    fetch(`${mock?.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: text }] }),
    });

  it("walks each route's script independently and records only responses with usage", async () => {
    mock = await startMockLlm(script);
    expect(mock.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const r1 = await post("/v1/chat/completions", "go [[mock:a]]");
    expect(r1.status).toBe(200);
    expect(await r1.text()).toContain('"prompt_tokens":13');
    const rb = await post("/v1/messages", "other [[mock:b]]");
    expect(await rb.text()).toContain("event: message_start");
    expect((await post("/v1/chat/completions", "again [[mock:a]]")).status).toBe(200);
    const err = await post("/v1/chat/completions", "fail [[mock:a]]");
    expect(err.status).toBe(400);
    expect(await err.text()).toContain("boom");
    expect(mock.records.map((r) => [r.route, r.turn, r.protocol, r.expected.inputTokens])).toEqual([
      ["a", 0, "openai", 13],
      ["b", 0, "anthropic", 12],
    ]);
    expect(mock.requests.map((r) => r.outcome)).toEqual(["reply", "reply", "reply-no-usage", "http-error"]);
    expect(mock.unexpected).toEqual([]);
    await mock.waitForTurns("a", 3, 100);
  });

  it("reports an exhausted route and unknown paths as unexpected", async () => {
    mock = await startMockLlm(script);
    await post("/v1/messages", "[[mock:b]]");
    expect((await post("/v1/messages", "[[mock:b]]")).status).toBe(400);
    expect((await fetch(`${mock.url}/v1/models`)).status).toBe(404);
    expect(mock.unexpected).toHaveLength(2);
    await expect(mock.waitForTurns("a", 1, 50)).rejects.toThrow(/did not reach/);
  });

  it("routes tool-less requests (the compaction summarizer) to noToolsRoute, and sends an error code", async () => {
    const seen: string[] = [];
    mock = await startMockLlm(
      {
        noToolsRoute: "sum",
        routes: {
          a: [
            {
              kind: "http-error",
              status: 400,
              message: "maximum context length",
              code: "context_length_exceeded",
            },
          ],
          sum: [{ kind: "reply", text: "summary [[mock:b]]", usage: { input: 5, output: 2 } }],
        },
      },
      { beforeStep: async (route, turn) => void seen.push(`${route}#${turn}`) },
    );
    const withTools = (text: string) =>
      fetch(`${mock?.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          messages: [{ role: "user", content: text }],
          tools: [{ type: "function", function: { name: "run_commands" } }],
        }),
      });
    const err = await withTools("go [[mock:a]]");
    expect(err.status).toBe(400);
    expect(JSON.parse(await err.text())).toMatchObject({ error: { code: "context_length_exceeded" } });
    // No tools advertised: the summarizer route, whatever markers the quoted transcript holds.
    const sum = await post("/v1/chat/completions", "summarize: go [[mock:a]]");
    expect(await sum.text()).toContain("summary [[mock:b]]");
    expect(mock.records.map((r) => r.route)).toEqual(["sum"]);
    expect(seen).toEqual(["a#0", "sum#0"]);
  });
  it("holds a `hold` step open without a record until the client goes away", async () => {
    mock = await startMockLlm({ routes: { h: [{ kind: "hold" }] } });
    const abort = new AbortController();
    const res = await fetch(`${mock.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "wait [[mock:h]]" }] }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    await mock.waitForTurns("h", 1, 1000);
    const body = res.body?.getReader();
    const next = body?.read();
    // Nothing is streamed: the read is still pending after a while.
    const raced = await Promise.race([next, new Promise((r) => setTimeout(() => r("pending"), 200))]);
    expect(raced).toBe("pending");
    abort.abort();
    await expect(next).rejects.toThrow();
    expect(mock.requests.map((r) => r.outcome)).toEqual(["held"]);
    expect(mock.records).toEqual([]);
  });
  it("pauses a reply after its first event when asked (message_start's usage, then the rest)", async () => {
    mock = await startMockLlm({
      routes: { p: [{ kind: "reply", text: "hi", usage: { input: 9, output: 4 }, pauseAfterStartMs: 300 }] },
    });
    const t0 = Date.now();
    const res = await post("/v1/messages", "go [[mock:p]]");
    const reader = res.body?.getReader();
    const first = new TextDecoder().decode((await reader?.read())?.value);
    expect(first).toContain("event: message_start");
    expect(first).not.toContain("message_delta");
    let rest = "";
    for (let r = await reader?.read(); r && !r.done; r = await reader?.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toContain("event: message_delta");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });
});
