#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance
# 0.2.0-alpha.12, Node 22 via npx) against two gateway replicas behind a
# round-robin proxy, once per revision's requirement set: `--requirements
# 2025-11-25` (sessions) and `--requirements 2026-07-28` (stateless), with the
# test-only conformance fixture service (test/fixtures/conformance-service)
# serving the suite's test_* tools, resources and prompts over the bus. Prints
# the result of every scenario; fails on any required scenario failing and on
# any failure not listed in test/conformance/expected-failures-<revision>.yml.
#
# Needs Redis and PostgreSQL on 127.0.0.1 (as .ci/run starts them) and the
# built apps (`npm run build`). `npm test` (and so .ci/run) runs it too.
set -euo pipefail
cd "$(dirname "$0")/.."
exec npx -y pnpm@10.34.9 exec jest test/e2e/protocol-conformance.e2e.test.ts "$@"
