#!/usr/bin/env bash
# Installs, builds and starts the whole stack in the foreground: the gateway on
# http://127.0.0.1:8080/mcp and dag-service, run-service, wiki-service. Each app
# migrates its own schema as it starts. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM="npx -y pnpm@10.34.9"
export TURBO_TELEMETRY_DISABLED=1
$PNPM install --frozen-lockfile
$PNPM exec turbo run build --output-logs=errors-only
exec node scripts/run-stack.js
