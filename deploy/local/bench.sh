#!/usr/bin/env bash
# `make bench` (after `make build`): start mdr and the gateway on a fresh
# temporary data directory and free loopback ports, seed the demo registry,
# and load two gateway paths with fris-bench next to its in-process baseline
# (a plain net/http handler serving the same bytes). Prints a Markdown table;
# BENCHMARKS.md explains it. Everything is stopped and removed afterwards.
#
# Environment:
#   BENCH_CONNECTIONS  connections (= workers) of the closed loop   (64)
#   BENCH_DURATION     measured time per path and target            (10s)
#   BENCH_WARMUP       discarded warm-up per path and target        (2s)
#   BENCH_PATHS        space-separated gateway paths                (the two below)
#   BENCH_JSON         file for the raw numbers        (bench/results/latest.json)
#   BIN                where make put the binaries                  (bin)
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
JSON=${BENCH_JSON:-bench/results/latest.json}
read -r -a PATHS <<<"${BENCH_PATHS:-/v3/api/mdr/dataelements/urn:mdr16:dataelement:23:1 /v3/api/mdr/namespaces/mdr16/members}"

for b in mdr gateway; do
  [[ -x "$BIN/$b" ]] || { echo "bench: $BIN/$b missing: run make build (make bench does)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fris-bench.XXXXXX")
pids=()
failed=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  if ((failed)) || ((rc)); then
    for log in "$tmp"/*.log; do
      [[ -s "$log" ]] || continue
      echo "--- last lines of $(basename "$log")" >&2
      tail -n 20 "$log" >&2
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
taken=" "
free_port() { # free_port VAR: sets VAR to a free loopback port not handed out before
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 30000))
    if [[ "$taken" != *" $p "* ]] && port_free "$p"; then
      taken+="$p "
      printf -v "$1" %s "$p"
      return 0
    fi
  done
  echo "bench: no free port found" >&2
  exit 1
}

# wait_ready URL PID NAME: poll until URL answers 200 (30 s at most).
wait_ready() {
  for _ in $(seq 1 300); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || { failed=1; echo "bench: $3 exited" >&2; exit 1; }
    sleep 0.1
  done
  failed=1
  echo "bench: $3 did not become ready" >&2
  exit 1
}

# The load tool is built first, so no compiler competes with the run.
go build -o "$BIN/fris-bench" ./gateway/cmd/fris-bench

free_port grpc_port
free_port ops_port

"$BIN/mdr" serve -data-dir "$tmp/data" -grpc-addr "127.0.0.1:$grpc_port" -ops-addr "127.0.0.1:$ops_port" \
  -log-level warn 2>>"$tmp/mdr.log" &
mdr_pid=$!
pids+=("$mdr_pid")
wait_ready "http://127.0.0.1:$ops_port/readyz" "$mdr_pid" mdr
"$BIN/mdr" import -addr "127.0.0.1:$grpc_port" services/mdr/demo/mdr16.json >"$tmp/import.log" 2>&1 ||
  { failed=1; echo "bench: import failed" >&2; exit 1; }

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "bench: $(nproc) CPUs (${model:-unknown model}), $(go env GOVERSION); load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
mkdir -p "$(dirname "$JSON")"

# run_pass LABEL JSON GATEWAY-FLAGS...: start a gateway with the flags, load
# it next to the baseline, stop it. Two passes: the gateway as deployed (with
# its short response cache) and with the cache off, i.e. every request
# crossing the gRPC hop, so both costs are on record from the same run.
rc=0
run_pass() {
  local label=$1 json=$2
  shift 2
  local gw_port gw_pid bench_pid
  free_port gw_port
  "$BIN/gateway" -addr "127.0.0.1:$gw_port" -mdr-addr "127.0.0.1:$grpc_port" -log-level warn "$@" 2>>"$tmp/gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/readyz" "$gw_pid" gateway
  echo >&2
  echo "bench: pass \"$label\": gateway $* (pid $gw_pid), mdr pid $mdr_pid" >&2
  echo
  echo "### $label"
  echo
  # In the background so a TERM to this script is handled at once (the trap
  # stops fris-bench with the services) instead of after the whole run.
  "$BIN/fris-bench" -gateway "http://127.0.0.1:$gw_port" -connections "$CONNECTIONS" \
    -duration "$DURATION" -warmup "$WARMUP" -json "$json" \
    -watch "gateway=$gw_pid,mdr=$mdr_pid" "${PATHS[@]}" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  kill -TERM "$gw_pid" 2>/dev/null || true
  wait "$gw_pid" 2>/dev/null || true
  pids=("${pids[@]:0:${#pids[@]}-1}")
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

run_pass "gateway as deployed (-mdr-cache-ttl 1s)" "$JSON"
run_pass "gateway without response cache (-mdr-cache-ttl 0): every request crosses gRPC" "${JSON%.json}-uncached.json" -mdr-cache-ttl 0
echo "bench: load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2

# Anything a service logged at warn or above during the run is worth seeing.
for log in "$tmp/mdr.log" "$tmp/gateway.log"; do
  if [[ -s "$log" ]]; then
    echo "--- $(basename "$log") (warn and above):" >&2
    tail -n 20 "$log" >&2
  fi
done
((rc == 0)) || failed=1
exit "$rc"
