// Loaded with `node --import` into a measured CLI process: at exit it appends the process's peak
// RSS and CPU time (KB, ms), and the main thread's own CPU time (ms: what is not V8's helper
// threads' marking, scavenging and optimizing compiles), as one JSON line to $CLINE_OTEL_BENCH_PROBE.
import { appendFileSync } from "node:fs";

const out = process.env.CLINE_OTEL_BENCH_PROBE;
if (out) {
  process.on("exit", () => {
    const u = process.resourceUsage();
    // Node >= 22.15 (the supported minimum) has it; an older Node reports no main-thread figure (null), not a wrong one.
    const m = process.threadCpuUsage?.();
    appendFileSync(
      out,
      `${JSON.stringify({
        maxRssKB: u.maxRSS,
        cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000,
        mainCpuMs: m === undefined ? null : (m.user + m.system) / 1000,
      })}\n`,
    );
  });
}
