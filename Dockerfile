# syntax=docker/dockerfile:1
#
# One image for every service (api, media, indexer, leads) and for the one-shot migration.
# The process is chosen by the command, e.g. `bun services/media/src/main.ts` or `bun scripts/migrate.ts`.
# Debian-based (glibc) on purpose: sharp's prebuilt libvips does not load on musl/alpine.

ARG BUN_VERSION=1.4.5

FROM oven/bun:${BUN_VERSION}-slim AS base
WORKDIR /app

# ---------------------------------------------------------------------------------------------
# manifests: only the package.json of each workspace, at its path. Globbing here (rather than one
# COPY per workspace) picks up new workspaces such as packages/database without editing this file,
# and because COPY --from compares file contents, source edits do not invalidate the install below.
FROM base AS manifests
WORKDIR /src
COPY packages ./packages
COPY services ./services
COPY infra ./infra
RUN set -eu; mkdir -p /manifests; \
    for f in packages/*/package.json services/*/package.json infra/package.json; do \
      if [ -f "$f" ]; then mkdir -p "/manifests/$(dirname "$f")"; cp "$f" "/manifests/$f"; fi; \
    done

# ---------------------------------------------------------------------------------------------
# deps: production dependencies exactly as pinned in bun.lock. Every workspace manifest (infra too)
# must be present, otherwise --frozen-lockfile sees a different workspace set and refuses.
FROM base AS deps
# The cache mount keeps downloaded tarballs between builds; it is a separate filesystem, so Bun
# copies out of it instead of hard-linking and nothing from the cache ends up in the layer.
ENV BUN_INSTALL_CACHE_DIR=/root/.bun/install/cache
COPY package.json bun.lock bunfig.toml ./
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.bun/install/cache \
    bun install --frozen-lockfile --production

# ---------------------------------------------------------------------------------------------
FROM base AS runtime
ENV NODE_ENV=production \
    MEDIA_DIR=/var/lib/pss/media

# Root node_modules plus the per-workspace node_modules (Bun's isolated linker puts symlinks there).
COPY --from=deps /app ./
COPY package.json bunfig.toml tsconfig.json ./
COPY packages ./packages
COPY services ./services
COPY scripts ./scripts

# Created here so a fresh named volume mounted at MEDIA_DIR inherits ownership by the `bun` user.
RUN mkdir -p /var/lib/pss/media && chown bun:bun /var/lib/pss/media

# The `bun` user (uid 1000) ships with the oven/bun images. Code stays root-owned and read-only.
USER bun

EXPOSE 8080 8081 8082 8083

# Works for every service: compose sets SERVICE_HEALTH_PORT to the port the process serves /readyz on.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bun", "-e", "fetch('http://127.0.0.1:' + (process.env.SERVICE_HEALTH_PORT ?? '8080') + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

CMD ["bun", "services/api/src/main.ts"]
