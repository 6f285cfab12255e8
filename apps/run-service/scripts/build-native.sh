#!/usr/bin/env bash
# Compiles the native step spawner (native/step-spawner.c) into dist/native/
# (docs/decisions.md "Steps start from a small spawner process"). run-service
# finds it there (process-spawner.ts `findStepSpawner`). Without a C compiler
# the build goes on and says so: run-service then starts steps itself
# (slower; RUN_STEP_SPAWNER has no effect).
set -euo pipefail
cd "$(dirname "$0")/.."
CC="${CC:-cc}"
mkdir -p dist/native
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "run-service: no C compiler ($CC): the native step spawner is not built; steps start from run-service itself" >&2
  rm -f dist/native/step-spawner
  exit 0
fi
"$CC" -std=gnu11 -O2 -Wall -Wextra -Werror -o dist/native/step-spawner.tmp native/step-spawner.c
mv dist/native/step-spawner.tmp dist/native/step-spawner
