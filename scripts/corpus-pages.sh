#!/usr/bin/env bash
# Compiles every project of the real-project corpus (test/fixtures/projects/real) with latexmk,
# as an author would, and records the page count (or null where latexmk made no PDF) in
# expected-<TeX Live year>.json, which test/compile/real-projects.ts (run by corpus.test.ts to corpus-4.test.ts) holds the service to. With
# --image (a TeX image root, issue #22) latexmk runs inside it with bubblewrap; without, on
# the host's TeX Live.
# With --corpus DIR it works on another corpus folder of the same layout (corpus.json, one folder
# per project, expected-<year>.json written there). LATEXMK_TIMEOUT (seconds, 300 by default)
# bounds one project's latexmk: a big thesis on a loaded machine may need more. latexmk also
# reads scripts/corpus-latexmkrc: the glossaries and nomencl helpers the service runs (as
# Overleaf does), which plain latexmk leaves out.
# Usage: scripts/corpus-pages.sh [--corpus DIR] [--image IMAGE_ROOT] [PROJECT...]   (named projects update their entries only)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=$here/test/fixtures/projects/real
image=
if [ "${1:-}" = --corpus ]; then corpus=$(cd "$2" && pwd); shift 2; fi
if [ "${1:-}" = --image ]; then image=$2; shift 2; fi
inside() {
  if [ -n "$image" ]; then
    bwrap --ro-bind "$image" / --bind "$1" /job --chdir /job --dev /dev --proc /proc --tmpfs /tmp \
      --setenv HOME /tmp --setenv PATH /usr/bin:/bin "${@:2}"
  else
    (cd "$1" && "${@:2}")
  fi
}
probe=$(mktemp -d)
texlive=$(inside "$probe" pdftex --version | head -1 | sed 's/.*(TeX Live \([0-9]*\).*/\1/')
rmdir "$probe"
# An image knows its year; its binaries may not (trixie's TeX Live 2024 says "TeX Live 2025/dev").
if [ -n "$image" ] && [ -f "$image/etc/quire-image.json" ]; then
  texlive=$(node -e "console.log(require('$image/etc/quire-image.json').year)")
fi
out=$corpus/expected-$texlive.json
result=$(mktemp)
if [ $# -gt 0 ] && [ -f "$out" ]; then
  node -e "console.log(JSON.stringify(require('$out').pages))" > "$result"
  names=("$@")
else
  echo '{}' > "$result"
  names=()
  for dir in "$corpus"/*/; do names+=("$(basename "$dir")"); done
fi
for name in "${names[@]}"; do
  engine=$(node -e "console.log(require('$corpus/corpus.json')['$name'].engine)")
  work=$(mktemp -d)
  cp -a "$corpus/$name/." "$work"
  cp "$here/scripts/corpus-latexmkrc" "$work/.corpus-latexmkrc"
  flag=-pdf; [ "$engine" = xelatex ] && flag=-xelatex; [ "$engine" = lualatex ] && flag=-lualatex
  pages=null
  if timeout "${LATEXMK_TIMEOUT:-300}" bash -c "$(declare -f inside); image='$image'; inside '$work' latexmk -r .corpus-latexmkrc $flag -interaction=nonstopmode -halt-on-error main.tex" > "$work/.latexmk.out" 2>&1; then
    # pdfinfo from the same TeX root: the host need not have poppler-utils
    pages=$(inside "$work" pdfinfo main.pdf | awk '/^Pages:/ {print $2}')
  else
    echo "$name: latexmk failed: $(grep -m1 '^!' "$work/main.log" 2>/dev/null || tail -1 "$work/.latexmk.out")" >&2
  fi
  echo "$name $engine $pages"
  node -e "const fs=require('fs');const r=JSON.parse(fs.readFileSync('$result'));r['$name']=$pages;fs.writeFileSync('$result',JSON.stringify(r))"
  rm -rf "$work"
done
node -e "const fs=require('fs');const p=JSON.parse(fs.readFileSync('$result'));const s={};for(const k of Object.keys(p).sort())s[k]=p[k];fs.writeFileSync('$out',JSON.stringify({texlive:'$texlive',pages:s},null,1)+'\n')"
rm -f "$result"
