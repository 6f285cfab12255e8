#!/usr/bin/env bash
# The fault suite (issue 18, docs/reliability.md): the scenarios of test/faults on their own
# Redis and PostgreSQL (started here, on spare ports, as the `postgres` user when root), the
# property tests at PROPERTY_RUNS cases each (default 10,000) and the soak for SOAK_SECONDS
# (default 120 here; `npm run test:soak` alone defaults to 600). One jest worker: the scenarios
# time outages, and `npm test` may run beside it (.ci/run). Budget: 10 minutes.
# Builds first unless FAULTS_SKIP_BUILD=1 (.ci/run builds once for both runs).
# Extra arguments go to jest, e.g. `npm run test:faults -- test/faults/orphaned-request`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${FAULTS_SKIP_BUILD:-0}" = "1" ] || bash scripts/build.sh
PNPM="npx -y pnpm@10.34.9"
export PROPERTY_RUNS="${PROPERTY_RUNS:-10000}"
export SOAK_SECONDS="${SOAK_SECONDS:-120}"
export FAULT_REPORT="${FAULT_REPORT:-$(mktemp "${TMPDIR:-/tmp}/dagu-fault-report.XXXXXX")}"
status=0
if [ "$#" -gt 0 ]; then
  $PNPM exec jest -c test/faults/jest.config.js --forceExit "$@" || status=$?
else
  # Two lanes side by side, each one jest worker: the fault scenarios (timed outages and kills),
  # and the property tests with the soak (CPU work that keeps within the scenarios' bounds).
  # Apart they take about 6 and 5 minutes; in a row they would pass the 10-minute budget.
  lane_log="$(mktemp "${TMPDIR:-/tmp}/fault-lane.XXXXXX")"
  $PNPM exec jest -c test/faults/jest.config.js --forceExit test/soak '\.property\.test\.ts$' >"$lane_log" 2>&1 &
  lane_pid=$!
  trap 'kill $lane_pid 2>/dev/null || true; rm -f "$lane_log"' INT TERM
  $PNPM exec jest -c test/faults/jest.config.js --forceExit test/faults || status=$?
  lane_status=0
  wait "$lane_pid" || lane_status=$?
  echo
  echo "==== property tests and soak ===="
  cat "$lane_log"
  rm -f "$lane_log"
  echo "==== property tests and soak: exit ${lane_status} ===="
  [ "$lane_status" -eq 0 ] || status=1
fi
echo
echo "==== fault suite figures (docs/reliability.md) ===="
cat "$FAULT_REPORT" 2>/dev/null || true
exit "$status"
