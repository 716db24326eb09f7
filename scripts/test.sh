#!/usr/bin/env bash
# The whole suite: types, lint, then every test file (Node 20 does not expand globs).
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install tsc -p tsconfig.json --noEmit
npx --no-install eslint --max-warnings=0 .
export QUIRE_TEST_PG="${QUIRE_TEST_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
mapfile -t files < <(find test -name '*.test.ts' | sort)
# A test that hangs fails after 10 minutes instead of stalling the run; a leaked handle
# cannot keep the runner alive once every test has finished.
exec node --import tsx --test --test-concurrency="${QUIRE_TEST_CONCURRENCY:-3}" \
  --test-timeout=600000 --test-force-exit "${files[@]}"
