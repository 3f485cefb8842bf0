/**
 * Writes dashboards/cline-otel.json from dashboard-model.ts (beside it):
 *   npx tsx otel-collector/grafana/generate-dashboard.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDashboard } from "./dashboard-model.ts";

const out = join(import.meta.dirname, "dashboards", "cline-otel.json");
writeFileSync(out, `${JSON.stringify(buildDashboard(), null, 2)}\n`);
process.stdout.write(`wrote ${out}\n`);
