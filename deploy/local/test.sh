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

# Fuzz targets of parsers of outside input, a few seconds each (their seed
# corpora already ran above as plain tests). Add a target as "PACKAGE FuzzName".
fuzz_targets=(
  "./services/broker/internal/query FuzzParse"
  "./services/broker/internal/reply FuzzReply"
  "./services/upload/internal/patient FuzzParse"
  "./services/upload/internal/stats FuzzParse"
  "./gateway/internal/routes FuzzParseUploadPath"
)
for t in "${fuzz_targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "test: fuzzing $name in $pkg for ${FUZZ_TIME:-3s}"
  go test -run='^$' -fuzz="^${name}\$" -fuzztime="${FUZZ_TIME:-3s}" "$pkg"
done
