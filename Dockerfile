# syntax=docker/dockerfile:1
#
# Junction's container image (issue #16).
#
#   docker build -t junction .
#   docker run -d --name junction -p 127.0.0.1:8080:8080 -v junction-data:/data \
#     -e JUNCTION_KEY=sk-jct-... -e ANTHROPIC_API_KEY=... junction
#
# The image runs `junction` (bin/junction.js) under tini: arguments after the image name are its
# command line (`serve …`, `check-config …`, `keys …`). By default it serves the config at
# /etc/junction/gateway.yaml (config/gateway.yaml, baked in; mount your own over it) on 0.0.0.0:8080
# with its SQLite ledger on the /data volume. Junction runs its TypeScript through tsx, so there is
# no compile step: the build stage only installs the production dependencies, compiling
# better-sqlite3's native addon against the same Node the runtime stage runs.

# The Node LTS line users run (Node 20 is end-of-life). The same version as .ci/run's Node 24.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
# node-gyp's toolchain, to compile better-sqlite3's addon.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# better-sqlite3 compiled from source against this image's own Node headers (/usr/local/include/node):
# nothing downloaded from GitHub (prebuilt binaries) or nodejs.org (headers), so the build needs
# only the npm registry and Debian's mirror, and the addon always matches the runtime's Node.
# (npm 11 warns it does not know these two: they are read by prebuild-install and node-gyp.)
ENV npm_config_build_from_source=true \
    npm_config_nodedir=/usr/local
COPY package.json package-lock.json ./
# Production dependencies only: tsx (the loader bin/junction.js registers) is one of them.
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY plugins ./plugins
COPY config ./config
# Fail the build, not the first start: the addon loads, and the default config and every plugin it
# names load with the production dependencies alone.
RUN node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()" \
 && node bin/junction.js check-config config/gateway.yaml

FROM node:${NODE_VERSION}-bookworm-slim
# tini as PID 1: it passes SIGTERM on to Junction (which drains, server.shutdown_grace_s) and reaps
# zombies. Baked in, so it does not depend on `docker run --init`.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    JUNCTION_STORAGE_URL=sqlite:///data/junction.db
WORKDIR /app
# Owned by root and read-only to the node user: the code cannot be changed by the process it runs.
COPY --from=build /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY plugins ./plugins
COPY config/gateway.yaml /etc/junction/gateway.yaml
# The ledger's folder, writable by the node user (uid 1000). A volume mounted here that is new
# takes this ownership; a host folder bind-mounted here must be writable by uid 1000.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# No curl in slim images: Node's fetch. JUNCTION_HEALTHCHECK_URL if you serve on another port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.JUNCTION_HEALTHCHECK_URL || 'http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains for up to server.shutdown_grace_s (30 s): give `docker stop` more (-t 35).
STOPSIGNAL SIGTERM
# Node 24 sizes its young generation as Junction wants. An image built on Node 22 and run as a
# single process wants -e NODE_OPTIONS=--max-semi-space-size=32, and says so when it starts;
# with --workers the workers get it from their primary (docs/deployment.md).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/junction.js"]
# config/gateway.yaml binds 127.0.0.1; a container must listen on every interface.
CMD ["serve", "--config", "/etc/junction/gateway.yaml", "--host", "0.0.0.0"]
