# syntax=docker/dockerfile:1
# Image of run-service: bus worker for DAG-runs and the engine; /healthz, /readyz, /metrics on OPS_PORT (8082).
#
# Build from the repository root (the context must be the whole workspace):
#   docker build -f infra/docker/run-service.Dockerfile -t dagu-mcp/run-service:local .
#
# Stages: tools (the full node:20-bookworm, with gcc) -> prune (`turbo prune --docker`: only this app's workspace packages and
# lockfile entries) -> build (install from the pruned lockfile, compile, then
# `pnpm deploy --prod`: the app with production dependencies only) -> runtime
# (Node only, no build tools, non-root, code owned by root so it is read-only
# to the app). The app migrates its own schema on start under a PostgreSQL
# advisory lock, so several replicas may start at once; no migrate job is needed.
#
# The one image that runs as root (docs/security.md "Step isolation and secrets
# at rest", "A uid per run"): run-service starts each run's steps as an
# unprivileged uid of their own (RUN_STEP_UID_RANGE, numeric: no user entries)
# with util-linux setpriv and prlimit (part of Debian's base), which needs the
# right to switch users. Compose and Kubernetes drop every capability but
# SETUID, SETGID, KILL, CHOWN, FOWNER and DAC_OVERRIDE. The dagu-step user
# stays for deployments that set the older RUN_STEP_USER.
#
# Kept simulation-friendly (test/deploy/image-build.test.ts runs these steps
# without a Docker engine): RUN lines use paths relative to WORKDIR only.
# turbo runs directly, not through `pnpm exec`, whose exported
# verify_deps_before_run="false" makes the parallel `pnpm run build`s race on
# pnpm's workspace-state file (see scripts/build.sh).
ARG NODE_IMAGE=node:20-bookworm-slim
# The build stages need a C compiler: the package's build compiles the native step
# spawner (apps/run-service/native/step-spawner.c, docs/decisions.md "Steps start from a
# small spawner process"). The full Debian image has gcc; the runtime stays slim, and the
# binary needs nothing but the same Debian release's libc.
ARG BUILD_IMAGE=node:20-bookworm

FROM ${BUILD_IMAGE} AS tools
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global pnpm@10.34.9 turbo@2.11.11

FROM tools AS prune
WORKDIR /repo
COPY . .
RUN turbo prune @dagu-mcp/run-service --docker

FROM tools AS build
WORKDIR /repo
COPY --from=prune /repo/out/json/ ./
COPY --from=prune /repo/out/pnpm-lock.yaml ./
RUN pnpm install --frozen-lockfile
COPY --from=prune /repo/out/full/ ./
COPY tsconfig.base.json ./
RUN turbo run build --filter=@dagu-mcp/run-service...
RUN pnpm --filter=@dagu-mcp/run-service deploy --prod --legacy ../app

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production RUN_STEP_UID_RANGE=200000-265535
WORKDIR /app
COPY --from=build /app ./
RUN getent passwd dagu-step || useradd --system --no-create-home dagu-step
USER 0:0
EXPOSE 8082
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||8082)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
