#!/usr/bin/env bash
# Installs, builds and starts the whole stack in the foreground: the gateway on
# http://127.0.0.1:8080/mcp and dag-service, run-service, wiki-service, agent-service. Each app
# migrates its own schema as it starts. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec node scripts/run-stack.js
