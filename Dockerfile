# Quire as an image: the API node by default; `node dist/src/cli/quire.js worker` runs a
# compile worker (QUIRE_QUEUE=bullmq). Debian bookworm (node:20-bookworm-slim is
# debian:bookworm-slim with Node 20) plus the Debian packages of scripts/setup.sh.
#
# TeX runs in bubblewrap, which needs namespaces that Docker's default seccomp and AppArmor
# profiles and its masked /proc paths forbid. Run both API nodes and workers with:
#   --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined
# (see docs/scaling.md). Without them the server and the worker refuse to start rather than
# run TeX unisolated. Not built or run on the machine this was written on: it has no container engine.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && touch dist/.built && npm prune --omit=dev

FROM node:20-bookworm-slim
# The same list as PACKAGES in scripts/setup.sh (test/packaging.test.ts keeps them equal).
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended \
    texlive-pictures texlive-science texlive-bibtex-extra texlive-xetex texlive-luatex \
    texlive-lang-european texlive-lang-german texlive-plain-generic lmodern tex-gyre \
    fonts-dejavu-core fonts-liberation2 fonts-noto-core cm-super-minimal biber latexmk \
    qpdf poppler-utils bubblewrap librsvg2-bin chktex ghostscript \
    libpdfbox2-java openjdk-17-jdk-headless \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 QUIRE_DATA_DIR=/data
# Root in the container: each TeX job then runs as its own unprivileged uid (see src/tex/queue.ts).
VOLUME /data
EXPOSE 8080
CMD ["node", "dist/src/server.js"]
