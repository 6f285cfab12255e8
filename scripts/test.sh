#!/usr/bin/env bash
# Runs the whole test suite: unit, integration (real Redis and PostgreSQL) and
# end-to-end (the built stack as local processes, driven by the MCP SDK client).
# Extra arguments go to jest, e.g. `npm test -- packages/bus`.
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM="npx -y pnpm@10.34.9"
bash scripts/build.sh
exec $PNPM exec jest "$@"
