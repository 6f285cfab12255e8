# syntax=docker/dockerfile:1
# Image of the MCP gateway: /mcp, /api/v1, /healthz, /readyz on PORT (8080); Prometheus /metrics on METRICS_PORT (9464).
# It also serves the web console (apps/web, issue 26): built to static files here and copied to
# /app/web (WEB_DIST_DIR); the gateway never imports the console's code.
#
# Build from the repository root (the context must be the whole workspace):
#   docker build -f infra/docker/mcp-gateway.Dockerfile -t dagu-mcp/mcp-gateway:local .
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
RUN turbo prune @dagu-mcp/mcp-gateway @dagu-mcp/web --docker

FROM tools AS build
WORKDIR /repo
COPY --from=prune /repo/out/json/ ./
COPY --from=prune /repo/out/pnpm-lock.yaml ./
RUN pnpm install --frozen-lockfile
COPY --from=prune /repo/out/full/ ./
COPY tsconfig.base.json ./
RUN turbo run build --filter=@dagu-mcp/mcp-gateway... --filter=@dagu-mcp/web
RUN pnpm --filter=@dagu-mcp/mcp-gateway deploy --prod --legacy ../app

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production WEB_DIST_DIR=/app/web
WORKDIR /app
COPY --from=build /app ./
COPY --from=build /repo/apps/web/dist ./web
USER 1000:1000
EXPOSE 8080 9464
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
