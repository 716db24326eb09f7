#!/usr/bin/env bash
# Makes this checkout ready to run: Debian packages, node_modules, build, the TeX images
# (TeX Live in a Debian root per year, docs/operations.md), TeX caches; with QUIRE_SETUP_TEST=1
# (npm test) also the services the suite talks to (scripts/test-services.sh).
# Every step checks first, so a setup that is already done costs well under two seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

# TeX Live is not installed on the host: it lives in the images built below. poppler-utils
# renders gallery previews on the host.
PACKAGES=(bubblewrap debootstrap poppler-utils)
# Only the test suite needs a browser, qpdf to check the service's PDFs independently, and a C
# compiler (the build compiles kpathsea's file-database library with it, and its test compiles
# probes; the service itself runs without one, only slower, docs/performance.md).
if [ "${QUIRE_SETUP_TEST:-}" = 1 ]; then PACKAGES+=(chromium qpdf gcc libc6-dev binutils); fi

missing=()
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PACKAGES[@]}" 2>/dev/null || true)
for pkg in "${PACKAGES[@]}"; do
  grep -q "^$pkg ii" <<<"$installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  line="apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" != 0 ]; then
    echo "quire setup: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get update && sudo $line" >&2
    exit 1
  fi
  echo "quire setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  $line -qq
fi

# node_modules follow package-lock.json: reinstall when the lock changed since the last install.
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f node_modules/.quire-lock ] || [ "$(cat node_modules/.quire-lock)" != "$lock" ]; then
  echo "quire setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock" >node_modules/.quire-lock
fi

# Build when any source is newer than the last build.
if [ ! -f dist/.built ] || [ -n "$(find src bin web native clients/typescript/src scripts/build-web.mjs scripts/build-cli.mjs scripts/build-native.mjs package.json tsconfig.json tsconfig.build.json -newer dist/.built -print -quit)" ]; then
  echo "quire setup: building"
  npm run --silent build
  touch dist/.built
fi

# The TeX images QUIRE_TEXLIVE names (default 2026), built once into QUIRE_TEXLIVE_DIR: the
# first build downloads about 2.6 GB and takes a while (docs/operations.md); later runs only
# read each image's marker.
node dist/src/cli/texlive-images.js

# The index of what each installed package defines (package suggestions, docs/diagnosis.md):
# built once per TeX Live (a few seconds) into ~/.cache/quire, then only read.
node --input-type=module -e "const m = await import('./dist/src/tex/diagnosis/catalog.js'); if (!(await m.ensureCatalog((await import('./dist/src/config.js')).texIndexDir()))) console.error('quire setup: TeX Live index not built');"

# The suite's PostgreSQL, Redis and S3 gateway: installed and started when they do not answer.
if [ "${QUIRE_SETUP_TEST:-}" = 1 ]; then bash scripts/test-services.sh; fi
