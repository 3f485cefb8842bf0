# syntax=docker/dockerfile:1
# cline-otel: OpenTelemetry metrics for the Cline CLI.
#   docker build -t cline-otel .
#   docker run --rm -v ~/.cline:/cline:ro -v cline-otel-state:/var/lib/cline-otel \
#     -e OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 cline-otel
# Node 24 LTS (cline-otel supports Node 22 and 24). better-sqlite3 13 ships prebuilt N-API binaries
# inside its npm package, so neither stage needs a compiler, headers or any download but the registry.
ARG NODE_VERSION=24.22.3

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
# Bundle src/ into dist/ (tools/build.js: rolldown, per-command chunks), then drop devDependencies
# (rolldown, tsc, tsx, vitest, biome): the runtime stage needs only the bundle and the production
# dependencies it leaves external (the SDK, gRPC, better-sqlite3).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# MALLOC_*: glibc's allocator with two arenas and a fixed mmap threshold returns what a first export
# or a backfill frees: ~16 MB less peak RSS at the same CPU (docs/performance.md "The first export's
# peak RSS"; the systemd unit in docs/service sets the same).
ENV NODE_ENV=production \
    CLINE_DIR=/cline \
    CLINE_OTEL_STATE_DIR=/var/lib/cline-otel/state \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# The ledger lives in a volume mounted here. cline-otel creates state/ itself with mode 0700
# and refuses a directory it does not own, so the parent is world-writable with the sticky bit:
# any uid (docker run --user "$(id -u)") gets its own private state dir.
RUN mkdir -p /var/lib/cline-otel && chmod 1777 /var/lib/cline-otel
# Unprivileged: the image's `node` user (uid 1000).
USER node
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["run"]
