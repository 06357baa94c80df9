#!/usr/bin/env bash
# Runs every test of every module with -race. Redis: REDIS_URL when set,
# else a throwaway redis-server on a free loopback port; Redis Cluster:
# REDIS_CLUSTER_URL when set, else a throwaway cluster of 3 masters with a
# replica each (redis-cluster.sh); both stopped afterwards. Under CI=true a
# missing Redis or cluster fails the run instead of skipping its tests.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Progress per step and the timing at the end, so a long run never looks hung.
start=$SECONDS
step_start=$SECONDS
timings=()
step() {
  echo "test: ==> $* ($(date +%H:%M:%S))"
  step_start=$SECONDS
}
step_done() {
  local took=$((SECONDS - step_start))
  timings+=("$1 ${took}s")
  echo "test: <== $1 took ${took}s"
}

redis_pid=""
redis_dir=""
fuzz_pid=""
cluster_dir=""
fuzz_list=""
summary_file=""
# The trap keeps the tests' exit status: nothing in it may end non-zero.
cleanup() {
  local rc=$?
  if [[ -n "$fuzz_pid" ]]; then
    kill -- "-$fuzz_pid" 2>/dev/null || true
    wait "$fuzz_pid" 2>/dev/null || true
  fi
  if [[ -n "$redis_pid" ]]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  if [[ -n "$redis_dir" ]]; then rm -rf "$redis_dir"; fi
  rm -f "$fuzz_list" "$summary_file"
  if [[ -n "$cluster_dir" ]]; then deploy/local/redis-cluster.sh stop "$cluster_dir" || true; fi
  if ((rc != 0)); then
    echo "test: FAILED (exit $rc) after $((SECONDS - start))s (${timings[*]:-})" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Below the kernel's ephemeral range, so no outgoing connection takes the
# port between the check and redis-server's bind.
eph_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((eph_lo > 12000)) || eph_lo=32768

if [[ -z "${REDIS_URL:-}" ]]; then
  if command -v redis-server >/dev/null 2>&1; then
    for _ in $(seq 1 50); do
      port=$((10000 + RANDOM % (eph_lo - 10000)))
      port_free "$port" && break
    done
    redis_dir=$(mktemp -d)
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
      --dir "$redis_dir" --logfile "$redis_dir/redis.log" &
    redis_pid=$!
    for _ in $(seq 1 100); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
      sleep 0.05
    done
    export REDIS_URL="redis://127.0.0.1:$port/0"
    echo "test: throwaway redis-server at $REDIS_URL"
  elif [[ "${CI:-}" == "true" ]]; then
    echo "test: CI=true but no REDIS_URL and no redis-server: the Redis backend must be tested" >&2
    exit 1
  else
    echo "test: no REDIS_URL and no redis-server; Redis backend tests will be skipped" >&2
  fi
fi

if [[ -z "${REDIS_CLUSTER_URL:-}" ]]; then
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    # Each node's cluster bus takes its port + 10000, below the ephemeral
    # range as well.
    cluster_ports=()
    for _ in $(seq 1 200); do
      ((${#cluster_ports[@]} == 6)) && break
      p=$((10000 + RANDOM % (eph_lo - 20000)))
      [[ " ${cluster_ports[*]} ${port:-} " == *" $p "* ]] && continue
      port_free "$p" && port_free $((p + 10000)) && cluster_ports+=("$p")
    done
    cluster_dir=$(mktemp -d)
    cluster_start=$SECONDS
    REDIS_CLUSTER_URL=$(deploy/local/redis-cluster.sh start "$cluster_dir" "${cluster_ports[@]}")
    export REDIS_CLUSTER_URL
    echo "test: throwaway Redis Cluster (3 masters, 3 replicas) at $REDIS_CLUSTER_URL, up in $((SECONDS - cluster_start))s"
  elif [[ "${CI:-}" == "true" ]]; then
    echo "test: CI=true but no REDIS_CLUSTER_URL and no redis-server and redis-cli: the Redis Cluster must be tested" >&2
    exit 1
  else
    echo "test: no REDIS_CLUSTER_URL and no redis-server and redis-cli; Redis Cluster tests will be skipped" >&2
  fi
fi

# -trimpath keeps checkout paths out of the build cache's keys: a fresh
# clone (CI's) then reuses what an earlier run in another directory
# compiled, instead of compiling every test binary with -race again (about
# 2.5 min of a cold run). The e2e harness's service builds inherit it.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
modules=$(go list -m -f '{{.Dir}}')
pkgs=()
for m in $modules; do pkgs+=("$m/..."); done
step "1/3 go vet (${#pkgs[@]} modules)"
go vet "${pkgs[@]}"
step_done vet
# Every fuzz target in the workspace (their seed corpora run in step 2 as
# plain tests): each test file's `func Fuzz...(`, found by `go list` and
# grep, so a new one cannot be left out; `go test -list` would compile every
# test package once more, without -race (a minute on a fresh clone).
fuzz_list=$(mktemp)
echo "test: listing the fuzz targets of every module"
for m in $modules; do
  # A plain assignment so that set -e and pipefail see a failing listing.
  files=$(cd "$m" && go list -f '{{$p := .ImportPath}}{{range .TestGoFiles}}{{$p}} {{$.Dir}}/{{.}}
{{end}}{{range .XTestGoFiles}}{{$p}} {{$.Dir}}/{{.}}
{{end}}' ./...)
  while read -r pkg file; do
    [[ -n "$file" ]] || continue
    { grep -oE '^func Fuzz[A-Za-z0-9_]+\(' "$file" || true; } | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' |
      while read -r name; do echo "$pkg $name"; done
  done <<<"$files" >>"$fuzz_list"
done
fuzz_count=$(grep -c . "$fuzz_list" || true)
if ((fuzz_count == 0)); then
  echo "test: no fuzz targets found" >&2
  exit 1
fi

# The fuzzing runs beside the tests with one worker per target, under
# SCHED_IDLE (chrt --idle; inherited by every process it starts): it gets a
# core only when no test wants it, and e2e's waits leave plenty. nice alone
# still gave each fuzz process about a tenth of a contended core: on one
# two-core machine the tests took 441 s beside niced fuzzing, 386 s beside
# SCHED_IDLE fuzzing, 337 s without, and the fuzzing ended before the tests
# both times. Its own process group, so a failed run stops all of it
# (cleanup).
idle=()
if command -v chrt >/dev/null 2>&1 && chrt --idle 0 true 2>/dev/null; then
  idle=(chrt --idle 0)
fi
step "2/3 go test -race, every package of every module; 3/3 fuzzing $fuzz_count targets beside them (${FUZZ_EXECS:-5000x} each)"
setsid "${idle[@]}" nice -n 10 deploy/local/fuzz.sh "$fuzz_list" &
fuzz_pid=$!
# One `go test` per package (tools/testrun), so each package's ok/FAIL line
# comes as it ends, whatever the order; a long package (e2e, listed first so
# it starts first) reports each top-level test as it ends.
summary_file=$(mktemp)
# tee keeps the stream live; pipefail keeps testrun's exit status.
go run ./tools/testrun -- -race -count=1 -timeout=12m "${pkgs[@]}" | tee "$summary_file"
step_done tests
counts=$(sed -n 's/.* \([0-9][0-9]*\) tests passed, \([0-9][0-9]*\) failed, \([0-9][0-9]*\) skipped.*/\1 passed, \2 failed, \3 skipped/p' "$summary_file" | tail -n 1)
rm -f "$summary_file"
summary_file=""
step "3/3 the rest of the fuzzing"
wait "$fuzz_pid"
fuzz_pid=""
rm -f "$fuzz_list"
fuzz_list=""
step_done fuzz
total=$((SECONDS - start))
echo "test: all passed in $((total / 60))m$((total % 60))s (${timings[*]})"
# The plain closing line a CI reader counts: the tests of step 2 (the fuzz
# targets' seeds among them).
echo "tests: ${counts:-0 passed, 0 failed}"
