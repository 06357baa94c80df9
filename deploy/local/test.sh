#!/usr/bin/env bash
# Runs every test of every module with -race. Redis: REDIS_URL when set,
# else a throwaway redis-server on a free loopback port, stopped afterwards.
# Under CI=true a missing Redis fails the run instead of skipping its tests.
set -euo pipefail
cd "$(dirname "$0")/../.."

redis_pid=""
redis_dir=""
# The trap keeps the tests' exit status: nothing in it may end non-zero.
cleanup() {
  local rc=$?
  if [[ -n "$redis_pid" ]]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  if [[ -n "$redis_dir" ]]; then rm -rf "$redis_dir"; fi
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

modules=$(go list -m -f '{{.Dir}}')
pkgs=()
for m in $modules; do pkgs+=("$m/..."); done
go vet "${pkgs[@]}"
go test -race -count=1 -timeout 12m "${pkgs[@]}"

# Every fuzz target in the workspace (their seed corpora already ran above as
# plain tests), found with `go test -list` so a new one cannot be left out.
# Budgets are execution counts, not durations: with a duration, Go 1.26's
# fuzz coordinator can report its own deadline as a failure under CPU
# contention (go.dev/issue/75804, fixed in 1.27). Minimization is capped by
# count too; the default 60s can eat a whole run on the registry's KB seeds.
fuzz_execs=${FUZZ_EXECS:-20000x}
fuzz_minimize=${FUZZ_MINIMIZE:-50x}
fuzz_targets=()
for m in $modules; do
  # A plain assignment so that set -e and pipefail see a failing listing.
  listed=$(cd "$m" && go test -list '^Fuzz' ./... |
    awk '/^Fuzz/ {n[++c] = $1; next} /^ok/ {for (i = 1; i <= c; i++) print $2, n[i]; c = 0}')
  while read -r pkg name; do
    [[ -n "$pkg" ]] && fuzz_targets+=("$pkg $name")
  done <<<"$listed"
done
if [ ${#fuzz_targets[@]} -eq 0 ]; then
  echo "test: no fuzz targets found" >&2
  exit 1
fi
for t in "${fuzz_targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "test: fuzzing $name in $pkg for $fuzz_execs"
  go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzz_execs" \
    -fuzzminimizetime="$fuzz_minimize" "$pkg"
done
