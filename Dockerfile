# syntax=docker/dockerfile:1
# Dock as an image: `docker build -t dock .` (or `podman build`), run with compose.yaml or as docs/production.md shows.
#
#   build    the whole workspace from the lockfile (dev dependencies included: esbuild), then the bundle that
#            `npm start` runs (scripts/bundle.mjs -> bundle/: the server, the CLI and the content worker).
#   deps     production dependencies only, from the same lockfile (`npm ci --omit=dev`): the bundle loads PGlite,
#            sharp, nodemailer and sanitize-html from node_modules at run time (docs/decisions.md, "Start and memory").
#   runtime  node, that node_modules, the bundle and the healthcheck script; runs as the image's `node` user (uid 1000).
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The manifests first, so the install layer is reused until the lockfile or a workspace's dependencies change.
COPY package.json package-lock.json ./
COPY migrations/package.json migrations/
COPY packages/domain/package.json packages/domain/
COPY packages/mcp/package.json packages/mcp/
COPY packages/server/package.json packages/server/
COPY packages/cli/package.json packages/cli/
# No install scripts: none is needed to bundle (esbuild and sharp ship their binaries as optional packages).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN node scripts/bundle.mjs

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY migrations/package.json migrations/
COPY packages/domain/package.json packages/domain/
COPY packages/mcp/package.json packages/mcp/
COPY packages/server/package.json packages/server/
COPY packages/cli/package.json packages/cli/
# The workspaces' own links (node_modules/@dock/*) point at sources the runtime does not have: the bundle holds them.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/@dock \
  && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# MALLOC_TRIM_THRESHOLD_ fixed at glibc's own default keeps glibc from raising its trim and mmap thresholds after
# large frees, which left an idle server ~40 MB larger for good (docs/decisions.md, issue 15's eighth pass).
ENV NODE_ENV=production \
    MALLOC_TRIM_THRESHOLD_=131072 \
    HOST=0.0.0.0 \
    PORT=8787 \
    DOCK_DATA_DIR=/data \
    DOCK_CACHE_DIR=/home/node/.cache/dock
WORKDIR /app
# package.json says "type": "module", which the bundle's .js files need; nothing else of the sources is copied.
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/bundle ./bundle
COPY scripts/healthcheck.mjs ./scripts/healthcheck.mjs
RUN mkdir -p /data /home/node/.cache/dock \
  && chown node:node /data /home/node/.cache /home/node/.cache/dock \
  && chmod 0700 /data /home/node/.cache/dock
USER node
# The embedded database (pgdata/), the generated development secrets and the development mail outbox. With
# DATABASE_URL set, nothing durable is written here.
VOLUME ["/data"]
EXPOSE 8787
# /healthz through the Host guard: the request names DOCK_BASE_URL's host (production answers no other).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# node is PID 1 and handles SIGTERM itself: it stops accepting, drains within DOCK_SHUTDOWN_GRACE and exits 0.
# Give the engine a stop timeout above the grace (`docker stop -t 30`, compose `stop_grace_period`).
STOPSIGNAL SIGTERM
CMD ["node", "bundle/main.js"]
