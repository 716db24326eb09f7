#!/usr/bin/env bash
# Makes this checkout ready to run: Debian packages, node_modules, build, TeX caches.
# Every step checks first, so a setup that is already done costs well under two seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

# Ghostscript converts EPS figures; PDFBox (with a JDK to build its small driver) checks PDF/A-1b.
PACKAGES=(
  texlive-latex-base texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended
  texlive-pictures texlive-science texlive-bibtex-extra texlive-xetex texlive-luatex
  texlive-lang-european texlive-lang-german texlive-plain-generic lmodern tex-gyre
  fonts-dejavu-core fonts-liberation2 fonts-noto-core cm-super-minimal biber latexmk
  qpdf poppler-utils bubblewrap librsvg2-bin chktex ghostscript
  libpdfbox2-java openjdk-17-jdk-headless
)
# Only the test suite needs a browser.
if [ "${QUIRE_SETUP_TEST:-}" = 1 ]; then PACKAGES+=(chromium); fi

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
  echo "quire setup: installing ${missing[*]} (TeX Live takes a few minutes the first time)"
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
if [ ! -f dist/.built ] || [ -n "$(find src bin web scripts/build-web.mjs package.json tsconfig.json tsconfig.build.json -newer dist/.built -print -quit)" ]; then
  echo "quire setup: building"
  npm run --silent build
  touch dist/.built
fi

# The index of what each installed package defines (package suggestions, docs/diagnosis.md):
# built once per TeX Live (a few seconds) into ~/.cache/quire, then only read.
node --input-type=module -e "const m = await import('./dist/src/tex/diagnosis/catalog.js'); if (!(await m.ensureCatalog((await import('./dist/src/config.js')).texIndexDir()))) console.error('quire setup: TeX Live index not built');"
