#!/usr/bin/env bash
# The whole suite: types, lint, then every test file (Node 20 does not expand globs).
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install tsc -p tsconfig.json --noEmit
npx --no-install eslint --max-warnings=0 .
export QUIRE_TEST_PG="${QUIRE_TEST_PG:-postgres://postgres@127.0.0.1:5432/postgres}"
# test/scale/ measures latency under load against a quiet baseline: those files run alone,
# after the rest, so that the suite's own parallel TeX does not count as the attack.
mapfile -t files < <(find test -name '*.test.ts' -not -path 'test/scale/*' | sort)
mapfile -t alone < <(find test/scale -name '*.test.ts' | sort)
# A test that hangs fails after 10 minutes instead of stalling the run; a leaked handle
# cannot keep the runner alive once every test has finished.
run() { node --import tsx --test --test-timeout=600000 --test-force-exit "$@"; }
status=0
run --test-concurrency="${QUIRE_TEST_CONCURRENCY:-3}" "${files[@]}" || status=$?
run --test-concurrency=1 "${alone[@]}" || status=$?
exit "$status"
