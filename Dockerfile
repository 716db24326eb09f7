# Quire as an image: the API node by default; `node dist/src/cli/quire.js worker` runs a
# compile worker (QUIRE_QUEUE=bullmq). The TeX image inside is made the way setup makes one
# (src/tex/image/): a Debian forky root with every non-doc TeX Live package, at
# /var/lib/quire/texlive/2026, which the sandbox binds as its root.
#
# Bases (build arguments): NODE_BASE (default node:20-bookworm-slim) runs the service;
# TEX_BASE (default debian:forky-slim) becomes the TeX image. scripts/container.sh builds both
# from local debootstrap roots with podman instead, where no registry is reachable.
#
# TeX runs in bubblewrap, which needs namespaces that Docker's default seccomp and AppArmor
# profiles and its masked /proc paths forbid. Run both API nodes and workers with:
#   --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined
# (see docs/scaling.md). Without them the server and the worker refuse to start rather than
# run TeX unisolated.
ARG NODE_BASE=node:20-bookworm-slim
ARG TEX_BASE=debian:forky-slim

FROM ${NODE_BASE} AS build
# better-sqlite3 builds from source where its prebuilt binary cannot be downloaded (no GitHub).
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && touch dist/.built && npm prune --omit=dev

# The TeX image: the builder's own settings and package choice, run in this root (--here).
# Node is there only for that step and leaves with its dependencies.
FROM ${TEX_BASE} AS texlive
COPY --from=build /app/package.json /quire/package.json
COPY --from=build /app/dist /quire/dist
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs \
  && node /quire/dist/src/cli/texlive-images.js --here 2026 \
  && DEBIAN_FRONTEND=noninteractive apt-get purge -y --auto-remove nodejs \
  && rm -rf /quire /var/lib/apt/lists/* /var/cache/apt/*.bin

FROM ${NODE_BASE}
# The same list as PACKAGES in scripts/setup.sh (test/packaging.test.ts keeps them equal).
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    bubblewrap debootstrap poppler-utils \
  && rm -rf /var/lib/apt/lists/*
COPY --from=texlive / /var/lib/quire/texlive/2026/
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 QUIRE_DATA_DIR=/data QUIRE_TEXLIVE_DIR=/var/lib/quire/texlive
# The engines' caches (inflated formats, luaotfload's font database) are not made in a build
# step: making them runs lualatex in the sandbox, and no build step can start one (podman's
# chroot builds refuse bubblewrap's user namespace, its OCI builds mask /proc; Docker confines
# RUN steps as a default `docker run` is). Bake them with a run and a commit, as scripts/container.sh does (docs/scaling.md):
#   docker run --name quire-warm <the --security-opt flags above> quire node dist/src/cli/texlive-images.js --warm
#   docker commit --change 'CMD ["node", "dist/src/server.js"]' quire-warm quire && docker rm -v quire-warm
# Root in the container: each TeX job then runs as its own unprivileged uid (see src/tex/sandbox/uids.ts).
VOLUME /data
EXPOSE 8080
CMD ["node", "dist/src/server.js"]
