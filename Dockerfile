# syntax=docker/dockerfile:1
# The controller image: compiled in one stage, production dependencies installed in another, and
# only those two copied onto the official Node 24 base, run as its unprivileged `node` user. The
# controller writes nothing to disk, so the root filesystem can be read-only (the chart sets it).

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

FROM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# jemalloc as the process's allocator, returning what it frees within seconds (a background thread,
# no lazily freed pages left counted as resident): glibc's malloc keeps the native memory each peer's
# TLS and HTTP/2 sessions and each burst of work fragment, and gives little of it back. Measured
# with bench/peer-cost.bench.ts, a peer costs an idle controller 2.30 and 2.69 MiB with it (two
# runs) against 2.95 without. An empty LD_PRELOAD (the chart's controller.extraEnv) runs Node on glibc's.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 MALLOC_CONF=background_thread:true,dirty_decay_ms:5000,muzzy_decay_ms:0
WORKDIR /app
COPY package.json ./
COPY bin ./bin
COPY --from=dependencies /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
USER 1000:1000
# Semi-spaces capped at 16 MiB: a controller syncing thousands of objects then holds about a third
# less memory for the same work. The old space at 40% of the memory limit (Node's own choice is
# half): what Node holds outside its heap (its code, compiler and TLS memory, buffers) then fits
# under the limit with a margin. In NODE_OPTIONS, so that an operator can trade CPU for memory.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size-percentage=40"
ENTRYPOINT ["node", "/app/bin/cluster-registry.js"]
CMD ["controller"]
