#!/usr/bin/env bash
# Fuzzes every target listed in FILE (lines "<package> <FuzzName>") for a
# fixed number of executions each, FUZZ_JOBS targets at a time, and prints
# one line per target as it ends; a failing target's whole output, then
# exit 1 (the other jobs stop after the target they are on).
#
#   deploy/local/fuzz.sh FILE
#
# make test runs it in the background under SCHED_IDLE while the tests run (its
# targets find idle cycles there, not the tests' cores), with one fuzz
# worker per target (-parallel=1); FUZZ_EXECS, FUZZ_MINIMIZE, FUZZ_PARALLEL
# and FUZZ_JOBS change the budget.
set -euo pipefail
cd "$(dirname "$0")/../.."

list=${1:?usage: fuzz.sh FILE}
# Budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can report its own deadline as a failure under CPU
# contention (go.dev/issue/75804, fixed in 1.27). Minimization is capped by
# count too; the default 60s can eat a whole run on the registry's KB seeds.
execs=${FUZZ_EXECS:-5000x}
minimize=${FUZZ_MINIMIZE:-50x}
parallel=${FUZZ_PARALLEL:-1}
# One target keeps about one core busy (its worker, then the next target's
# build), so once the tests are done a single job would leave the other
# core idle: two jobs, each its share of the list.
jobs=${FUZZ_JOBS:-2}

total=$(grep -c . "$list" || true)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fuzz_share runs targets job, job+jobs, ... of the list (numbered as in
# the list), stopping before its next target once another job failed.
fuzz_share() {
  local job=$1 i=0 pkg name began out="$tmp/out.$1"
  while read -r pkg name; do
    [[ -n "$pkg" ]] || continue
    i=$((i + 1))
    (((i - 1) % jobs == job)) || continue
    [[ -e "$tmp/failed" ]] && return 0
    began=$SECONDS
    if go test -run='^$' -fuzz="^${name}\$" -fuzztime="$execs" -fuzzminimizetime="$minimize" \
      -parallel="$parallel" "$pkg" >"$out" 2>&1; then
      echo "test: fuzz $i/$total: $name in $pkg: ok ($((SECONDS - began))s)"
    else
      touch "$tmp/failed"
      { echo "test: fuzz $i/$total: $name in $pkg: FAILED"; cat "$out"; } >&2
      return 1
    fi
  done <"$list"
}

pids=()
for ((j = 0; j < jobs; j++)); do
  fuzz_share "$j" &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do
  wait "$pid" || rc=1
done
exit "$rc"
