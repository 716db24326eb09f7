#!/usr/bin/env bash
# Builds the Dockerfile with Debian's podman from bases made here with debootstrap (no
# registry is needed but Debian's and npm's), bakes the engines' caches into it (a run and a
# commit), runs the container, and compiles hello with each engine through it; prints build
# time, image size and the compile results. Not part of CI.
#
#   scripts/container.sh            # TEX_BASE: the TeX image setup built (the same image)
#   scripts/container.sh --fresh    # TEX_BASE: a bare debootstrap forky (the image is built inside)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "container.sh: run as root (debootstrap, podman)" >&2; exit 1; }
command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null || { echo "container.sh: apt-get install podman runc debootstrap" >&2; exit 1; }

MIRROR=http://deb.debian.org/debian
TEXLIVE_DIR=${QUIRE_TEXLIVE_DIR:-/var/lib/quire/texlive}
WORK=$(mktemp -d /var/tmp/quire-container.XXXXXX)
PORT=${PORT:-18080}
trap 'podman rm -f -i -v quire-container-test quire-container-warm >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
t0=$(date +%s)
say() { echo "container.sh [$(( $(date +%s) - t0 ))s] $*"; }

# A Debian root as a podman image (debootstrap minbase, imported as one layer).
debian_base() { # name suite script
  if podman image exists "$1"; then return; fi
  say "debootstrap $2 -> $1"
  debootstrap --variant=minbase "$2" "$WORK/$2" "$MIRROR" "/usr/share/debootstrap/scripts/$3" >"$WORK/$2.log"
  printf 'Acquire::Check-Valid-Until "false";\n' >"$WORK/$2/etc/apt/apt.conf.d/01-valid"
  tar -C "$WORK/$2" -c . | podman import - "$1" >/dev/null
  rm -rf "${WORK:?}/$2"
}

# NODE_BASE: Debian bookworm with this machine's Node 20 and npm, as node:20-bookworm-slim
# would give (no registry is reachable, and Debian's own Node is 18 in bookworm, 24 in forky).
debian_base localhost/quire-debian:bookworm bookworm bookworm
debian_base localhost/quire-debian:forky forky sid
if ! podman image exists localhost/quire-node:20; then
  say "node base (Node $(node --version) from this machine)"
  mkdir -p "$WORK/node/lib"
  cp /usr/bin/node "$WORK/node/node"
  cp -a /usr/lib/node_modules/npm "$WORK/node/lib/npm"
  # This machine's CA bundle too: where the npm registry is reached through a proxy with its own CA.
  cp /etc/ssl/certs/ca-certificates.crt "$WORK/node/ca.crt"
  # Node's headers too: better-sqlite3 builds from source here, and node-gyp cannot fetch them.
  cp -a /usr/include/node "$WORK/node/include"
  printf 'FROM localhost/quire-debian:bookworm\nCOPY node /usr/bin/node\nCOPY lib/npm /usr/lib/node_modules/npm\nCOPY ca.crt /etc/ssl/certs/ca-certificates.crt\nCOPY include /usr/include/node\nENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm_config_nodedir=/usr\nRUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/bin/npx && node --version\n' \
    | podman build --isolation chroot -q -t localhost/quire-node:20 -f - "$WORK/node" >/dev/null
fi
if [ "${1:-}" = --fresh ]; then
  TEX_BASE=localhost/quire-debian:forky
else
  [ -f "$TEXLIVE_DIR/2026/etc/quire-image.json" ] || { echo "container.sh: no TeX image in $TEXLIVE_DIR/2026; run scripts/setup.sh or use --fresh" >&2; exit 1; }
  if ! podman image exists localhost/quire-texlive:2026; then
    say "importing the TeX image $TEXLIVE_DIR/2026"
    tar -C "$TEXLIVE_DIR/2026" -c . | podman import - localhost/quire-texlive:2026 >/dev/null
  fi
  TEX_BASE=localhost/quire-texlive:2026
fi

say "podman build (NODE_BASE=localhost/quire-node:20 TEX_BASE=$TEX_BASE)"
b0=$(date +%s)
podman build --isolation chroot -t localhost/quire:test --build-arg NODE_BASE=localhost/quire-node:20 --build-arg TEX_BASE="$TEX_BASE" . >"$WORK/build.log" 2>&1 \
  || { tail -40 "$WORK/build.log"; exit 1; }
size() { podman image inspect localhost/quire:test --format '{{.Size}}' | awk '{printf "%.2f GB", $1/1e9}'; }
say "built in $(( $(date +%s) - b0 ))s; image $(size)"

# runc with explicit limits: this host's hybrid cgroups stop crun, and its hard limits stop
# podman's default ulimits. The security options are bubblewrap's (docs/scaling.md).
RUN_OPTS=(--runtime runc run --ulimit nofile=1024:20000 --ulimit nproc=4096:4096
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined)

# The engines' caches, baked: the service's own preparation (texlive-images.js --warm) in a
# container that may start the sandbox (no build step can), committed as the image's last layer.
say "baking the engines' caches"
w0=$(date +%s)
podman "${RUN_OPTS[@]}" --name quire-container-warm localhost/quire:test node dist/src/cli/texlive-images.js --warm
podman commit -q --change 'CMD ["node", "dist/src/server.js"]' quire-container-warm localhost/quire:test >/dev/null
podman rm -v quire-container-warm >/dev/null
say "caches baked in $(( $(date +%s) - w0 ))s; image $(size)"

podman "${RUN_OPTS[@]}" -d --name quire-container-test -p "127.0.0.1:$PORT:8080" \
  -e QUIRE_SECRET=container-test-secret-0123456789 localhost/quire:test >/dev/null
for _ in $(seq 120); do curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$PORT/health" | node -e 'const h = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log("health:", h.status, JSON.stringify(h.texlive.map((i) => [i.year, i.debian, i.engines.pdflatex])))'
key=$(podman exec quire-container-test node dist/src/cli/quire.js account create --email container@example.com --plan pro --json | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).api_key)')
status=0
for compiler in pdflatex xelatex lualatex; do
  body=$(printf '{"latex":"\\\\documentclass{article}\\\\begin{document}Hello from %s.\\\\end{document}","compiler":"%s"}' "$compiler" "$compiler")
  s0=$(date +%s%N)
  out=$(curl -sS -H "authorization: Bearer $key" -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$PORT/api/v1/compile")
  ms=$(( ($(date +%s%N) - s0) / 1000000 ))
  if echo "$out" | grep -q '"pages":1'; then say "$compiler: ok in ${ms} ms ($(echo "$out" | grep -o '"texlive":"[^"]*"'))"; else say "$compiler: FAILED: ${out:0:400}"; status=1; fi
done
exit $status
