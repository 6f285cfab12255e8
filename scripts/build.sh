#!/usr/bin/env bash
# Installs (frozen lockfile) and builds every workspace package; start.sh,
# test.sh and bench/bench.sh call it first.
#
# turbo is started through `pnpm exec` (which puts the pinned pnpm on PATH for
# the per-package `pnpm run build`s turbo spawns) with pnpm's
# `*_verify_deps_before_run` variables removed: pnpm 10 exports them as the
# string "false", which its child `pnpm run`s read as true; they then check the
# dependencies and rewrite node_modules/.pnpm-workspace-state-v1.json in
# parallel, and a reader can see it half-written ("Unexpected end of JSON
# input", pnpm/pnpm#12020).
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM="npx -y pnpm@10.34.9"
export TURBO_TELEMETRY_DISABLED=1
$PNPM install --frozen-lockfile
$PNPM exec env -u npm_config_verify_deps_before_run -u pnpm_config_verify_deps_before_run \
  turbo run build --output-logs=errors-only
