#!/usr/bin/env bash
# Runs the whole test suite: unit, integration (real Redis and PostgreSQL) and
# end-to-end (the built stack as local processes, driven by the MCP SDK client).
# Extra arguments go to jest, e.g. `npm test -- packages/bus`.
#
# Alongside the main run, the bus suite runs a second time with
# BUS_HANDOFF=false (BullMQ's stock path, no direct hand-off: see
# packages/bus/src/handoff/README.md), in parallel, one jest worker, its output
# kept in a log and printed once both runs are done. It runs with no arguments
# (CI) or when an argument names packages/bus (then on those paths only).
#
# With no arguments (the whole suite, as CI runs it) the static checks of
# scripts/check.sh (lint, format check, type-check of every file) run beside
# them too, their output kept and printed the same way.
# The script fails when any run fails. TEST_SKIP_BUILD=1 skips the build (.ci/run builds once
# for this and the fault suite, which run side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM="npx -y pnpm@10.34.9"
[ "${TEST_SKIP_BUILD:-0}" = "1" ] || bash scripts/build.sh

stock_args=()
if [ "$#" -eq 0 ]; then
  stock_args=(packages/bus)
else
  for arg in "$@"; do
    case "$arg" in
      packages/bus* | ./packages/bus*) stock_args+=("$arg") ;;
    esac
  done
fi

stock_pid=""
stock_log=""
if [ "${#stock_args[@]}" -gt 0 ]; then
  stock_log="$(mktemp "${TMPDIR:-/tmp}/bus-handoff-off.XXXXXX")"
  BUS_HANDOFF=false $PNPM exec jest --maxWorkers=1 "${stock_args[@]}" >"$stock_log" 2>&1 &
  stock_pid=$!
fi

check_pid=""
check_log=""
if [ "$#" -eq 0 ]; then
  check_log="$(mktemp "${TMPDIR:-/tmp}/static-checks.XXXXXX")"
  bash scripts/check.sh >"$check_log" 2>&1 &
  check_pid=$!
fi
trap 'kill $stock_pid $check_pid 2>/dev/null || true; rm -f "$stock_log" "$check_log"' INT TERM

main_status=0
$PNPM exec jest "$@" || main_status=$?

stock_status=0
if [ -n "$stock_pid" ]; then
  wait "$stock_pid" || stock_status=$?
  echo
  echo "==== packages/bus again with BUS_HANDOFF=false (BullMQ's stock path) ===="
  cat "$stock_log"
  rm -f "$stock_log"
  echo "==== BUS_HANDOFF=false run: exit ${stock_status} ===="
fi

check_status=0
if [ -n "$check_pid" ]; then
  wait "$check_pid" || check_status=$?
  echo
  echo "==== static checks: lint, format check, type-check (scripts/check.sh) ===="
  cat "$check_log"
  rm -f "$check_log"
  echo "==== static checks: exit ${check_status} ===="
fi

if [ "$main_status" -ne 0 ] || [ "$stock_status" -ne 0 ] || [ "$check_status" -ne 0 ]; then
  echo "test.sh: main jest run exit ${main_status}, BUS_HANDOFF=false bus run exit ${stock_status}, static checks exit ${check_status}" >&2
  exit 1
fi
