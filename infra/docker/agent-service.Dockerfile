# syntax=docker/dockerfile:1
# Image of agent-service: bus worker for published agents and their catalogs; /healthz, /readyz, /metrics on OPS_PORT (8084).
#
# Build from the repository root (the context must be the whole workspace):
#   docker build -f infra/docker/agent-service.Dockerfile -t dagu-mcp/agent-service:local .
#
# Stages: prune (`turbo prune --docker`: only this app's workspace packages and
# lockfile entries) -> build (install from the pruned lockfile, compile, then
# `pnpm deploy --prod`: the app with production dependencies only) -> runtime
# (Node only, no build tools, non-root, code owned by root so it is read-only
# to the app). The app migrates its own schema on start under a PostgreSQL
# advisory lock, so several replicas may start at once; no migrate job is needed.
#
# Kept simulation-friendly (test/deploy/image-build.test.ts runs these steps
# without a Docker engine): RUN lines use paths relative to WORKDIR only.
# turbo runs directly, not through `pnpm exec`, whose exported
# verify_deps_before_run="false" makes the parallel `pnpm run build`s race on
# pnpm's workspace-state file (see scripts/build.sh).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS tools
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global pnpm@10.34.9 turbo@2.11.11

FROM tools AS prune
WORKDIR /repo
COPY . .
RUN turbo prune @dagu-mcp/agent-service --docker

FROM tools AS build
WORKDIR /repo
COPY --from=prune /repo/out/json/ ./
COPY --from=prune /repo/out/pnpm-lock.yaml ./
RUN pnpm install --frozen-lockfile
COPY --from=prune /repo/out/full/ ./
COPY tsconfig.base.json ./
RUN turbo run build --filter=@dagu-mcp/agent-service...
RUN pnpm --filter=@dagu-mcp/agent-service deploy --prod --legacy ../app

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app ./
USER 1000:1000
EXPOSE 8084
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||8084)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
