# syntax=docker/dockerfile:1
#
# One image for every service (api, marketplace, media, indexer, leads, webhooks, portal) and for the one-shot migration.
# The process is chosen by the command, e.g. `bun services/media/src/main.ts`, or
# `bun packages/database/src/migrate-main.ts` for the migration. Only production dependencies are
# installed, so code in the image imports only what its own workspace's package.json declares
# (test/docker/workspace-dependencies.test.ts); scripts/ (local tooling on devDependencies) is not copied.
# Debian-based (glibc) on purpose: sharp's prebuilt libvips does not load on musl/alpine.

ARG BUN_VERSION=1.4.5

FROM oven/bun:${BUN_VERSION}-slim AS base
WORKDIR /app

# ---------------------------------------------------------------------------------------------
# deps: production dependencies exactly as pinned in bun.lock. `bun install --frozen-lockfile` reads the
# root manifest, bun.lock, bunfig.toml, every patch named in patchedDependencies, and the package.json
# of every workspace (infra too: with one missing, it sees a different workspace set and refuses).
# Only those files are copied, one by one, so source edits do not invalidate this layer.
# test/docker/dockerfile.test.ts fails when one of them is missing here (a new workspace or patch).
FROM base AS deps
# The cache mount keeps downloaded tarballs between builds; it is a separate filesystem, so Bun
# copies out of it instead of hard-linking and nothing from the cache ends up in the layer.
ENV BUN_INSTALL_CACHE_DIR=/root/.bun/install/cache
COPY package.json bun.lock bunfig.toml ./
COPY patches ./patches
COPY packages/contracts/package.json ./packages/contracts/
COPY packages/database/package.json ./packages/database/
COPY packages/geo/package.json ./packages/geo/
COPY packages/http-kit/package.json ./packages/http-kit/
COPY packages/html/package.json ./packages/html/
COPY packages/service-kit/package.json ./packages/service-kit/
COPY packages/sdk/package.json ./packages/sdk/
COPY services/admin/package.json ./services/admin/
COPY services/api/package.json ./services/api/
COPY services/indexer/package.json ./services/indexer/
COPY services/leads/package.json ./services/leads/
COPY services/marketplace/package.json ./services/marketplace/
COPY services/media/package.json ./services/media/
COPY services/portal/package.json ./services/portal/
COPY services/webhooks/package.json ./services/webhooks/
COPY infra/package.json ./infra/
RUN --mount=type=cache,target=/root/.bun/install/cache \
    bun install --frozen-lockfile --production

# ---------------------------------------------------------------------------------------------
FROM base AS runtime
# BUN_OPTIONS: the runtime's header limit above the services' own 16 KiB, so oversized headers get their JSON 431
# (packages/http-kit/src/edge.ts, RUNTIME_BUN_OPTIONS).
ENV NODE_ENV=production \
    MEDIA_DIR=/var/lib/pss/media \
    BUN_OPTIONS=--max-http-header-size=1048576

# Root node_modules plus the per-workspace node_modules (Bun's isolated linker puts symlinks there).
COPY --from=deps /app ./
COPY package.json bunfig.toml tsconfig.json ./
COPY packages ./packages
COPY services ./services

# Created here so a fresh named volume mounted at MEDIA_DIR inherits ownership by the `bun` user.
RUN mkdir -p /var/lib/pss/media && chown bun:bun /var/lib/pss/media

# The `bun` user (uid 1000) ships with the oven/bun images. Code stays root-owned and read-only.
USER bun

# 8080: the API's public port, 8088: the marketplace's, 8090: the portal's. Health ports (/healthz, /readyz, /metrics):
# media 8081, indexer 8082, leads 8083, outbox relay 8084, API 8085 (API_HEALTH_PORT), webhooks 8086, portal 8087,
# marketplace 8089.
EXPOSE 8080 8081 8082 8083 8084 8085 8086 8087 8088 8089 8090

# Works for every service: compose sets SERVICE_HEALTH_PORT to the port the process serves /readyz on; without
# it, the default command's (the API's) health port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:' + (process.env.SERVICE_HEALTH_PORT ?? '8085') + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["bun", "services/api/src/main.ts"]
