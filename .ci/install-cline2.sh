#!/usr/bin/env bash
# Installs the real Cline CLI 2.x (npm cline@2.18.0: a Node script, engines node >= 20, the legacy task
# core that writes the task format) next to cline@3.0.65, for the task-format fixture harness and its live
# test; prints the binary on its last line (.ci/run exports it as CLINE_OTEL_CLINE2_BIN).
set -euo pipefail
exec bash "$(dirname "$0")/install-cline.sh" 2.18.0 "${CLINE_OTEL_CLINE2_PREFIX:-/opt/cline-2.18.0}"
