#!/usr/bin/env bash
# Static checks (`npm run check`; `npm test` runs it beside the whole suite):
# ESLint with type information, Prettier's format check, and the type-check of
# every source, test, fixture and benchmark file (tsconfig.check.json). turbo
# runs the three root tasks side by side. Needs `pnpm install` done
# (scripts/build.sh); needs no build.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1
exec npx -y pnpm@10.34.9 exec env -u npm_config_verify_deps_before_run -u pnpm_config_verify_deps_before_run \
  turbo run //#lint //#format:check //#typecheck:all --continue --output-logs=errors-only --log-order=grouped "$@"
