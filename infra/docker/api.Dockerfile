# The api image. Built by `npm run images` (infra/docker/build-images.sh), which first makes the local
# base images (no registry needed). The build stage is the same in every
# process Dockerfile, so Docker runs it once and the images share it from the cache.
ARG NODE_IMAGE=timeshare/node:20
ARG BASE=timeshare/debian:bookworm

FROM ${NODE_IMAGE} AS build
# node-gyp's toolchain for the native engine (headers for Node are in the base image).
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The CAs the build machine trusts (build-images.sh writes them; machines behind a TLS-inspecting
# proxy need its CA to reach the npm registry). Only this stage sees them.
COPY infra/docker/build-ca.pem /tmp/build-ca.pem
ENV NODE_EXTRA_CA_CERTS=/tmp/build-ca.pem
COPY package.json package-lock.json prisma.config.ts tsconfig.json ./
COPY scripts/ scripts/
COPY native/ native/
COPY prisma/ prisma/
# The base image says NODE_ENV=production; building needs the dev tools (node-gyp, tsc).
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
# tsc copies no data files: the migration tool and the device lock read theirs beside the compiled
# code (the lock's fallback path to the source tree is stale since it moved to common/). The
# dashboard is bundled on its own into ui/dist (only the api image copies it).
RUN npx tsc -p tsconfig.json \
 && node ui/build.mjs \
 && cp -r prisma/migrations prisma/schema.prisma dist/prisma/ \
 && cp -r common/device-lock/lua dist/common/device-lock/ \
 && npm prune --omit=dev --no-audit --no-fund \
 && npm uninstall --no-save --ignore-scripts --no-audit --no-fund prisma \
 && rm -rf node_modules/.cache native/build/Release/obj.target native/build/Release/.deps

# The runtime: Debian, the node binary and the app; no npm, headers or compilers.
FROM ${BASE}
COPY --from=build /usr/local/bin/node /usr/local/bin/node
RUN groupadd --system --gid 10001 timeshare \
 && useradd --system --uid 10001 --gid timeshare --home-dir /app --shell /usr/sbin/nologin timeshare
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules/ node_modules/
COPY --from=build /src/dist/ dist/
# The dashboard (/ui): static files the API serves.
COPY --from=build /src/ui/dist/ ui/dist/
# Also the image of the one-shot migration job: node dist/prisma/tools/migrate.js deploy
ENV HOST=0.0.0.0 PORT=8080
USER timeshare
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(\"http://127.0.0.1:8080/healthz\").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/api/main.js"]
