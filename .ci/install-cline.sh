#!/usr/bin/env bash
# Installs a real Cline CLI OUTSIDE the project's dependencies, for the fixture harness and the live
# tests; prints the binary on its last line. Idempotent: a matching install is reused.
#   .ci/install-cline.sh                    cline@3.0.65 (a Bun-compiled binary shipped in a platform
#                                           package, @cline/cli-linux-x64, ~430 MB) into
#                                           ${CLINE_OTEL_CLINE_PREFIX:-/opt/cline-3.0.65}
#   .ci/install-cline.sh <version> <prefix> another version (.ci/install-cline2.sh: 2.18.0)
set -euo pipefail

VERSION="${1:-3.0.65}"
PREFIX="${2:-${CLINE_OTEL_CLINE_PREFIX:-/opt/cline-${VERSION}}}"
BIN="$PREFIX/node_modules/.bin/cline"

installed_version() {
  # The CLI may print a banner; only the version number matters.
  CLINE_NO_AUTO_UPDATE=1 "$BIN" --version 2>/dev/null | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n1 || true
}

if [ -x "$BIN" ] && [ "$(installed_version)" = "$VERSION" ]; then
  echo "cline $VERSION already installed" >&2
else
  mkdir -p "$PREFIX"
  npm install --prefix "$PREFIX" --no-save --no-audit --no-fund --loglevel=error "cline@${VERSION}" >&2
  got="$(installed_version)"
  if [ "$got" != "$VERSION" ]; then
    echo "install-cline: expected cline $VERSION at $BIN, got '${got:-nothing}'" >&2
    exit 1
  fi
fi

echo "$BIN"
