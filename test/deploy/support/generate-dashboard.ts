/** Writes otel-collector/grafana/dashboards/cline-otel.json from dashboard-model.ts. */
import { writeFileSync } from "node:fs";
import { DASHBOARD_PATH } from "./dashboard.ts";
import { buildDashboard } from "./dashboard-model.ts";

writeFileSync(DASHBOARD_PATH, `${JSON.stringify(buildDashboard(), null, 2)}\n`);
process.stdout.write(`wrote ${DASHBOARD_PATH}\n`);
