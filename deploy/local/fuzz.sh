#!/usr/bin/env bash
# Fuzzes every target listed in FILE (lines "<package> <FuzzName>") for a
# fixed number of executions each, one after another, and prints one line
# per target as it ends; a failing target's whole output, then exit 1.
#
#   deploy/local/fuzz.sh FILE
#
# make test runs it in the background under nice while the tests run (its
# targets find idle cycles there, not the tests' cores), with one fuzz
# worker per target (-parallel=1); FUZZ_EXECS, FUZZ_MINIMIZE and
# FUZZ_PARALLEL change the budget.
set -euo pipefail
cd "$(dirname "$0")/../.."

list=${1:?usage: fuzz.sh FILE}
# Budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can report its own deadline as a failure under CPU
# contention (go.dev/issue/75804, fixed in 1.27). Minimization is capped by
# count too; the default 60s can eat a whole run on the registry's KB seeds.
execs=${FUZZ_EXECS:-20000x}
minimize=${FUZZ_MINIMIZE:-50x}
parallel=${FUZZ_PARALLEL:-1}

total=$(grep -c . "$list" || true)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=0
while read -r pkg name; do
  [[ -n "$pkg" ]] || continue
  i=$((i + 1))
  began=$SECONDS
  if go test -run='^$' -fuzz="^${name}\$" -fuzztime="$execs" -fuzzminimizetime="$minimize" \
    -parallel="$parallel" "$pkg" >"$out" 2>&1; then
    echo "test: fuzz $i/$total: $name in $pkg: ok ($((SECONDS - began))s)"
  else
    echo "test: fuzz $i/$total: $name in $pkg: FAILED" >&2
    cat "$out" >&2
    exit 1
  fi
done <"$list"
