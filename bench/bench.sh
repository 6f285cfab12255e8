#!/usr/bin/env bash
# `npm run bench` / `npm run bench:smoke`: makes sure Redis and PostgreSQL
# answer (starting them with the machine's own commands when they do not, as
# .ci/run does), installs, builds, then runs the harness. Arguments go to
# bench/run.mjs, e.g. `npm run bench -- --rounds 3 --only S1,S2`. `--scale-runs` first
# runs the scale bench instead (bench/scale-runs.mjs, issue 47: `npm run bench:scale`), the
# other arguments going to it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${REDIS_URL:-}" ] && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "bench: starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/bench.log
fi
if [ -z "${DATABASE_URL:-}${BENCH_DATABASE_URL:-}" ] && ! pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then
  echo "bench: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
for _ in $(seq 1 30); do
  if [ -n "${REDIS_URL:-}" ] || redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    if [ -n "${DATABASE_URL:-}${BENCH_DATABASE_URL:-}" ] || pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; then break; fi
  fi
  sleep 1
done

bash scripts/build.sh
if [ "${1:-}" = "--scale-runs" ]; then
  shift
  exec node bench/scale-runs.mjs "$@"
fi
exec node bench/run.mjs "$@"
