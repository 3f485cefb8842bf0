#!/usr/bin/env bash
# Installs the real Cline CLIs OUTSIDE the project's dependencies, for the fixture harness and the
# live end-to-end tests. Idempotent: a matching install is reused. Prints each binary, one a line:
# cline@2.18.0 first, cline@3.0.65 LAST (callers take `tail -n 1` for the 3.x binary).
#   cline@3.0.65: a Bun-compiled binary shipped in a platform package (@cline/cli-linux-x64), ~430 MB.
#   cline@2.18.0: the legacy task core (the task format, docs/cline-format.md §15), plain JS on Node >= 20.
set -euo pipefail

install_one() {
  local version="$1" prefix="$2"
  local bin="$prefix/node_modules/.bin/cline"
  installed_version() {
    # The CLI may print a banner; only the version number matters.
    CLINE_NO_AUTO_UPDATE=1 "$bin" --version 2>/dev/null | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n1 || true
  }
  if [ -x "$bin" ] && [ "$(installed_version)" = "$version" ]; then
    echo "cline $version already installed" >&2
  else
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "cline@${version}" >&2
    local got
    got="$(installed_version)"
    if [ "$got" != "$version" ]; then
      echo "install-cline: expected cline $version at $bin, got '${got:-nothing}'" >&2
      exit 1
    fi
  fi
  echo "$bin"
}

install_one "2.18.0" "${CLINE_OTEL_CLINE2_PREFIX:-/opt/cline-2.18.0}"
install_one "3.0.65" "${CLINE_OTEL_CLINE_PREFIX:-/opt/cline-3.0.65}"
