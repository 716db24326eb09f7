#!/usr/bin/env bash
# Compiles every project of the real-project corpus (test/fixtures/projects/real) with latexmk,
# as an author would, and records the page count (or why it failed) in expected.json, which
# test/compile/corpus.test.ts then holds the service to. With an image root (a folder holding
# a TeX Live, see issue #22) latexmk runs inside it with bubblewrap; without one, on the host.
# Usage: scripts/corpus-pages.sh [--image IMAGE_ROOT] [PROJECT...]   (named projects update their entries only)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=$here/test/fixtures/projects/real
image=
if [ "${1:-}" = --image ]; then image=$2; shift 2; fi
result=$(mktemp)
if [ $# -gt 0 ] && [ -f "$corpus/expected.json" ]; then
  node -e "console.log(JSON.stringify(require('$corpus/expected.json').pages))" > "$result"
  names=("$@")
else
  echo '{}' > "$result"
  names=()
  for dir in "$corpus"/*/; do names+=("$(basename "$dir")"); done
fi
for name in "${names[@]}"; do
  dir=$corpus/$name/
  engine=$(node -e "console.log(require('$corpus/corpus.json')['$name'].engine)")
  work=$(mktemp -d)
  cp -a "$dir". "$work"
  flag=-pdf; [ "$engine" = xelatex ] && flag=-xelatex; [ "$engine" = lualatex ] && flag=-lualatex
  cmd=(latexmk "$flag" -interaction=nonstopmode -halt-on-error main.tex)
  if [ -n "$image" ]; then
    cmd=(bwrap --ro-bind "$image" / --bind "$work" /w --chdir /w --dev /dev --proc /proc --tmpfs /tmp --setenv HOME /tmp "${cmd[@]}")
  fi
  pages=null
  if (cd "$work" && timeout 300 "${cmd[@]}" > "$work/.latexmk.out" 2>&1); then
    pages=$(pdfinfo "$work/main.pdf" | awk '/^Pages:/ {print $2}')
  else
    echo "$name: latexmk failed: $(grep -m1 '^!' "$work/main.log" 2>/dev/null || tail -1 "$work/.latexmk.out")" >&2
  fi
  echo "$name $engine $pages"
  node -e "const fs=require('fs');const r=JSON.parse(fs.readFileSync('$result'));r['$name']=$pages;fs.writeFileSync('$result',JSON.stringify(r,null,1)+'\n')"
  rm -rf "$work"
done
texlive=$( (if [ -n "$image" ]; then bwrap --ro-bind "$image" / --dev /dev --proc /proc pdftex --version; else pdftex --version; fi) | head -1 | sed 's/.*(TeX Live \([0-9]*\).*/\1/')
node -e "const fs=require('fs');fs.writeFileSync('$corpus/expected.json',JSON.stringify({texlive:'$texlive',pages:JSON.parse(fs.readFileSync('$result'))},null,1)+'\n')"
rm -f "$result"
