#!/usr/bin/env bash
# `make bench` (after `make build`): start mdr, the auth service and the
# gateway on a fresh temporary data directory and free loopback ports, seed
# the demo registry, a client and a user, and load the gateway with
# fris-bench. Prints Markdown tables; BENCHMARKS.md explains them.
# Everything is stopped and removed afterwards.
#
# Two passes, each with its own gateway:
#   1. as deployed (-mdr-cache-ttl 1s): suite mdr (registry reads next to an
#      in-process baseline), then suite auth (token responses/s of the
#      refresh flows (spec-shaped; OAuth 2.0 with the HS256 refresh token for
#      an RS256 client, an ES256 client and a client whose access token a
#      stub signs, the pure protocol cost) and the signature flow next to the
#      raw RS256, ES256 and EdDSA signing rates). The auth service of this
#      stack is built here with -tags fris_bench_null, the only build that
#      has the stub (-bench-null-signer); no deployment's binary can
#   2. without the response cache (-mdr-cache-ttl 0), every read crossing to
#      mdr: suite mdr again, then suite bearer (a read with and without a
#      valid access token)
#   3. suite broker, once on the embedded store and once on a throwaway
#      redis-server (skipped with a note when there is none): a broker and a
#      gateway of its own, 1,000 banks polling GET /inquiries at 1,000/s
#   4. suite upload, once on the embedded store and once on a throwaway
#      redis-server with appendfsync always: an upload service and a gateway
#      of its own, 8 clients uploading new 5 KB patients, next to the disk's
#      plain fsync rate measured before and after in the same directory
#   5. suite cluster: a throwaway single redis-server and a throwaway Redis
#      Cluster of 3 masters with a replica each, both appendfsync everysec;
#      on each an auth service, an upload service and a gateway. Rounds
#      alternate single, cluster, single, cluster; each round is an upload
#      run (8 clients, new 5 KB patients, 20 sites round robin) and a token
#      refresh run. Prints each store's rates, the cluster/single ratio and
#      the keys the upload runs added on each master
#   6. suite guess: an auth service of its own (no cache of verified
#      passwords, so every sign-in hashes) and a gateway; a real user signs
#      in at the login form alone, then while 64 guessers send wrong
#      passwords from another loopback address (127.0.0.2)
#   7. suite attack: every service and a gateway as `make run` starts them,
#      seeded alike; a researcher signs in (login form and code exchange)
#      and a connector uploads, from 127.0.0.1, for BENCH_ATTACK_DURATION
#      without attack, then during each attack from other loopback
#      addresses (guessing a client secret, the account, the site's
#      password, from 50 addresses at once, registrations, anonymous 8 MiB
#      bodies, 4,200 slow connections, anonymous Explorer sign-ins); p99s
#      against the quiet run's
#   8. suite memory: every service and a gateway as `make run` starts them
#      (embedded store, its flags, the Explorer's client), on a data
#      directory of their own, seeded with the demo data as `make run` does;
#      after BENCH_MEMORY_IDLE idle (argon2's buffers go back to the OS 2 s
#      after the last hash) the resident memory (VmRSS) of each process and
#      the total against BENCH_MEMORY_TARGET_MB
#   9. suite streams: the stack of suite memory (the broker with
#      -registration approval, so two banks can reply), twice: with the
#      gateway as deployed (the results streams of an inquiry share one
#      broker watch and rendering) and with -explorer-share-streams=false
#      (each stream its own, as before: the baseline). The user signs in to
#      the Explorer, BENCH_STREAMS streams of the demo inquiry open from 4
#      loopback addresses, the banks reply BENCH_STREAMS_REPLIES times; the
#      gateway's CPU per event received, and the five processes' VmRSS
#      before, with the streams open and BENCH_STREAMS_IDLE after they close
#
# Environment:
#   BENCH_SUITES             suites to run, comma-separated: mdr,auth,bearer,broker,upload,cluster,guess,attack,memory,streams (all)
#   BENCH_ATTACK_DURATION    the attack suite's measured time, quiet and per attack (8s)
#   BENCH_ATTACKS            the attack suite's attacks, comma-separated (all; names in fris-bench -h)
#   BENCH_MEMORY_IDLE        the memory suite's idle wait before reading VmRSS (5s)
#   BENCH_MEMORY_TARGET_MB   the memory suite's target for the five processes (120)
#   BENCH_STREAMS            the streams suite's open results streams           (200)
#   BENCH_STREAMS_REPLIES    the streams suite's replies                        (30)
#   BENCH_STREAMS_IDLE       the streams suite's wait after closing them        (60s)
#   BENCH_GUESS_DURATION     the guess suite's measured time, alone and under guessing (10s)
#   BENCH_GUESSERS           guessing goroutines of the guess suite            (64)
#   BENCH_UPLOAD_DURATION    measured time of the upload suite                 (10s)
#   BENCH_UPLOAD_CLIENTS     concurrent uploading clients                      (8)
#   BENCH_UPLOAD_BATCH_DELAY the upload's group-commit window, both stores    (the service's default, 2ms)
#   BENCH_CLUSTER_DURATION   measured time of each upload and refresh run of the cluster suite (10s)
#   BENCH_CLUSTER_ROUNDS     rounds of the cluster suite, each single then cluster (2)
#   BENCH_CLUSTER_SITES      sites the cluster suite's uploads are spread over  (20)
#   BENCH_BROKER_DURATION    measured time of the broker suite                 (30s)
#   BENCH_BROKER_BANKS       banks of the broker suite (poll rate = banks/s)   (1000)
#   BENCH_CONNECTIONS        connections of the mdr and bearer suites          (64)
#   BENCH_TOKEN_CONNECTIONS  connections of the auth suite's flows             (16)
#   BENCH_DURATION           measured time per run                             (10s)
#   BENCH_WARMUP             discarded warm-up per run                         (2s)
#   BENCH_TOKEN_DURATION     measured time of each auth flow in each round     (4s)
#   BENCH_TOKEN_ROUNDS       rounds of both auth flows                         (5)
#   BENCH_TOKEN_FLOWS        the auth suite's flows, comma-separated (all; names in fris-bench -h)
#   BENCH_FLOW_PROCS         fris-bench's GOMAXPROCS during an auth flow, 0 = all CPUs (1)
#   BENCH_FLOW_BATCH         fris-bench under SCHED_BATCH during an auth flow      (true)
#   BENCH_RSA_DURATION       raw RSA signing rate, before and after each flow  (2s)
#   BENCH_PATHS              space-separated gateway paths of the mdr suite    (the two below)
#   BENCH_BEARER_PATH        the bearer suite's read                           (the dataelement)
#   BENCH_JSON               raw numbers of pass 1; pass 2 adds -uncached  (bench/results/latest.json)
#   BENCH_LOCK               held for the whole run; a second run waits (/tmp/fris-bench.lock)
#   BIN                      where make put the binaries                       (bin)
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
TOKEN_CONNECTIONS=${BENCH_TOKEN_CONNECTIONS:-16}
RSA_DURATION=${BENCH_RSA_DURATION:-2s}
TOKEN_DURATION=${BENCH_TOKEN_DURATION:-4s}
TOKEN_ROUNDS=${BENCH_TOKEN_ROUNDS:-5}
TOKEN_FLOWS=${BENCH_TOKEN_FLOWS:-}
FLOW_PROCS=${BENCH_FLOW_PROCS:-1}
FLOW_BATCH=${BENCH_FLOW_BATCH:-true}
JSON=${BENCH_JSON:-bench/results/latest.json}
read -r -a PATHS <<<"${BENCH_PATHS:-/v3/api/mdr/dataelements/urn:mdr16:dataelement:23:1 /v3/api/mdr/namespaces/mdr16/members}"
BEARER_PATH=${BENCH_BEARER_PATH:-/v3/api/mdr/dataelements/urn:mdr16:dataelement:23:1}
SUITES=${BENCH_SUITES:-mdr,auth,bearer,broker,upload,cluster,guess,attack,memory,streams}
[[ "$SUITES" == all ]] && SUITES=mdr,auth,bearer,broker,upload,cluster,guess,attack,memory,streams
ATTACK_DURATION=${BENCH_ATTACK_DURATION:-8s}
ATTACKS=${BENCH_ATTACKS:-}
MEMORY_IDLE=${BENCH_MEMORY_IDLE:-5s}
MEMORY_TARGET_MB=${BENCH_MEMORY_TARGET_MB:-120}
STREAMS=${BENCH_STREAMS:-200}
STREAMS_REPLIES=${BENCH_STREAMS_REPLIES:-30}
STREAMS_IDLE=${BENCH_STREAMS_IDLE:-60s}
GUESS_DURATION=${BENCH_GUESS_DURATION:-10s}
GUESSERS=${BENCH_GUESSERS:-64}
BROKER_DURATION=${BENCH_BROKER_DURATION:-30s}
BROKER_BANKS=${BENCH_BROKER_BANKS:-1000}
UPLOAD_DURATION=${BENCH_UPLOAD_DURATION:-10s}
UPLOAD_CLIENTS=${BENCH_UPLOAD_CLIENTS:-8}
UPLOAD_BATCH_DELAY=${BENCH_UPLOAD_BATCH_DELAY:-}
CLUSTER_DURATION=${BENCH_CLUSTER_DURATION:-10s}
CLUSTER_ROUNDS=${BENCH_CLUSTER_ROUNDS:-2}
CLUSTER_SITES=${BENCH_CLUSTER_SITES:-20}
for s in ${SUITES//,/ }; do
  case $s in
    mdr | auth | bearer | broker | upload | cluster | guess | attack | memory | streams) ;;
    *) echo "bench: BENCH_SUITES: unknown suite \"$s\" (have mdr, auth, bearer, broker, upload, cluster, guess, attack, memory, streams)" >&2; exit 2 ;;
  esac
done
selected() { [[ ",$SUITES," == *",$1,"* ]]; }
# Two benchmarks at once measure each other: one runs at a time, the next
# waits (make hydra-compare takes the same lock).
lock=${BENCH_LOCK:-${TMPDIR:-/tmp}/fris-bench.lock}
exec 9>"$lock"
if ! flock -n 9; then
  echo "bench: another benchmark holds $lock; waiting for it to end" >&2
  flock 9
fi
# pass_suites CANDIDATES...: the selected ones, comma-separated.
pass_suites() {
  local out=() s
  for s in "$@"; do selected "$s" && out+=("$s"); done
  local IFS=,
  echo "${out[*]}"
}

for b in mdr auth gateway broker upload; do
  [[ -x "$BIN/$b" ]] || { echo "bench: $BIN/$b missing: run make build (make bench does)" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fris-bench.XXXXXX")
pids=()
failed=0
cluster_dir=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  # The cluster's nodes run daemonized, so they are stopped by their pidfiles.
  [[ -z "$cluster_dir" ]] || deploy/local/redis-cluster.sh stop "$cluster_dir" || true
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
# A throwaway CA: the services take mutual TLS only (docs/security.md).
# Connections are long-lived, so the handshakes are not in the numbers.
"$BIN/fris-certs" -dir "$tmp/tls" >/dev/null
tls() { # tls NAME: the flags of NAME's certificate, into TLS
  TLS=(-tls-cert "$tmp/tls/$1.pem" -tls-key "$tmp/tls/$1-key.pem" -tls-ca "$tmp/tls/ca.pem")
}
tls gateway; TLS_GATEWAY=("${TLS[@]}")
# The load generator is one address standing for many clients, and its
# one user for many users: the gateway's per-address and per-subject caps
# (docs/security.md, "Limits") would refuse it.
GW_LOAD=(-max-conns-per-addr 0 -max-inflight-per-addr 0 -max-conns-per-subject 0 -max-inflight-per-subject 0)
tls admin; TLS_ADMIN=("${TLS[@]}")
tls auth; TLS_AUTH=("${TLS[@]}")
tls mdr; TLS_MDR=("${TLS[@]}")
tls upload; TLS_UPLOAD=("${TLS[@]}")
tls broker; TLS_BROKER=("${TLS[@]}")

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Ports come from below the kernel's ephemeral range: one inside it can be
# free when checked and taken by an outgoing connection before the service
# binds it (seen once: "bind: address already in use").
eph_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((eph_lo > 12000)) || eph_lo=32768
taken=" "
free_port() { # free_port VAR: sets VAR to a free loopback port not handed out before
  local p
  for _ in $(seq 1 100); do
    p=$((10000 + RANDOM % (eph_lo - 10000)))
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
go build -o "$BIN/fris-bench" ./tools/fris-bench

free_port grpc_port
free_port ops_port
free_port auth_grpc_port
free_port auth_ops_port
# The tokens' issuer names pass 1's gateway; pass 2's gateway checks the same
# value (the issuer is an identifier there, nothing fetches from it).
free_port gw1_port
issuer="http://127.0.0.1:$gw1_port"

# The demo client and user the auth and bearer suites sign in with; their
# secrets go to fris-bench through the environment, never on a command line.
rnd() { head -c 24 /dev/urandom | base64 | tr -d '/+='; }
CLIENT_ID=fris-bench
USER_EMAIL=bench@fris.example
export FRIS_BENCH_CLIENT_SECRET FRIS_BENCH_USER_PASSWORD
FRIS_BENCH_CLIENT_SECRET=$(rnd)
FRIS_BENCH_USER_PASSWORD=$(rnd)

# With the auth suite, this stack's auth service is the benchmark's build:
# the same code plus the stub signer for one client (refresh-null).
AUTH_MAIN="$BIN/auth" NULL_ARGS=()
if selected auth; then
  go build -tags fris_bench_null,grpcnotrace -o "$tmp/auth-bench" ./services/auth/cmd/auth ||
    { echo "bench: building the benchmark's auth (-tags fris_bench_null) failed" >&2; exit 1; }
  AUTH_MAIN="$tmp/auth-bench" NULL_ARGS=(-bench-null-signer "$CLIENT_ID-null")
fi
# A throwaway secret for the throwaway signing keys, through the
# environment of this one process.
FRIS_AUTH_KEY_SECRETS=$(head -c 32 /dev/urandom | base64) FRIS_AUTH_BENCH_NULL_SIGNER=${NULL_ARGS[*]:+unverifiable-tokens} \
  "$AUTH_MAIN" serve "${TLS_AUTH[@]}" -data-dir "$tmp/data" -grpc-addr "127.0.0.1:$auth_grpc_port" -ops-addr "127.0.0.1:$auth_ops_port" \
  -issuer "$issuer" -log-level warn "${NULL_ARGS[@]}" 2>>"$tmp/auth.log" &
auth_pid=$!
pids+=("$auth_pid")

"$BIN/mdr" serve "${TLS_MDR[@]}" -data-dir "$tmp/data" -grpc-addr "127.0.0.1:$grpc_port" -ops-addr "127.0.0.1:$ops_port" \
  -log-level warn 2>>"$tmp/mdr.log" &
mdr_pid=$!
pids+=("$mdr_pid")
wait_ready "http://127.0.0.1:$ops_port/readyz" "$mdr_pid" mdr
wait_ready "http://127.0.0.1:$auth_ops_port/readyz" "$auth_pid" auth
"$BIN/mdr" import "${TLS_ADMIN[@]}" -addr "127.0.0.1:$grpc_port" services/mdr/demo/mdr16.json >"$tmp/import.log" 2>&1 ||
  { failed=1; echo "bench: import failed" >&2; exit 1; }
{
  "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$auth_grpc_port" -client-id "$CLIENT_ID" -secret "$FRIS_BENCH_CLIENT_SECRET" \
    -name "fris-bench" -type MDR -redirect-url http://localhost:8888/callback &&
    "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$auth_grpc_port" -client-id "$CLIENT_ID-es256" -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name "fris-bench ES256" -type MDR -redirect-url http://localhost:8888/callback -alg ES256 &&
    "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$auth_grpc_port" -client-id "$CLIENT_ID-null" -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name "fris-bench stub signer" -type MDR -redirect-url http://localhost:8888/callback &&
    "$BIN/auth" create-user "${TLS_ADMIN[@]}" -addr "127.0.0.1:$auth_grpc_port" -email "$USER_EMAIL" -password "$FRIS_BENCH_USER_PASSWORD" \
      -name "Bench User" -email-verified
} >"$tmp/seed.log" 2>&1 || { failed=1; echo "bench: seeding the auth service failed" >&2; cat "$tmp/seed.log" >&2; exit 1; }

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "bench: $(nproc) CPUs (${model:-unknown model}), $(go env GOVERSION); load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
mkdir -p "$(dirname "$JSON")"

# run_pass LABEL JSON SUITES PORT GATEWAY-FLAGS...: start a gateway with the
# flags, run the suites against it, stop it. Pass 1 is the gateway as
# deployed (with its short response cache), pass 2 the cache off, i.e. every
# read crossing the gRPC hop, so both costs are on record from the same run.
rc=0
run_pass() {
  local label=$1 json=$2 suites=$3 gw_port=$4
  shift 4
  [[ -n "$suites" ]] || return 0
  local gw_pid bench_pid args=()
  "$BIN/gateway" "${TLS_GATEWAY[@]}" "${GW_LOAD[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$grpc_port" \
    -auth-addr "127.0.0.1:$auth_grpc_port" -jwks-url "http://127.0.0.1:$auth_ops_port/jwks" -issuer "$issuer" \
    -log-level warn "$@" 2>>"$tmp/gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/health/groups" "$gw_pid" gateway
  echo >&2
  echo "bench: pass \"$label\" (suites $suites): gateway${*:+ $*} (pid $gw_pid), mdr pid $mdr_pid, auth pid $auth_pid" >&2
  echo
  echo "### $label"
  echo
  [[ ",$suites," == *",mdr,"* ]] && args+=("${PATHS[@]}")
  # In the background so a TERM to this script is handled at once (the trap
  # stops fris-bench with the services) instead of after the whole run.
  "$BIN/fris-bench" -gateway "http://127.0.0.1:$gw_port" -suites "$suites" -connections "$CONNECTIONS" \
    -token-connections "$TOKEN_CONNECTIONS" -duration "$DURATION" -warmup "$WARMUP" -rsa-duration "$RSA_DURATION" \
    -token-duration "$TOKEN_DURATION" -token-rounds "$TOKEN_ROUNDS" ${TOKEN_FLOWS:+-token-flows "$TOKEN_FLOWS"} -flow-procs "$FLOW_PROCS" -flow-batch="$FLOW_BATCH" \
    -client-id "$CLIENT_ID" -user-email "$USER_EMAIL" -bearer-path "$BEARER_PATH" -json "$json" \
    -es256-client-id "$CLIENT_ID-es256" ${NULL_ARGS[*]:+-null-client-id "$CLIENT_ID-null"} \
    -watch "gateway=$gw_pid,auth=$auth_pid,mdr=$mdr_pid" "${args[@]}" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  kill -TERM "$gw_pid" 2>/dev/null || true
  wait "$gw_pid" 2>/dev/null || true
  pids=("${pids[@]:0:${#pids[@]}-1}")
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

free_port gw2_port
run_pass "gateway as deployed (-mdr-cache-ttl 1s)" "$JSON" "$(pass_suites mdr auth)" "$gw1_port"
run_pass "gateway without response cache (-mdr-cache-ttl 0): every registry read crosses gRPC" \
  "${JSON%.json}-uncached.json" "$(pass_suites mdr bearer)" "$gw2_port" -mdr-cache-ttl 0

# start_redis VAR [always|everysec]: starts a throwaway redis-server in the
# temporary directory on a free port and sets VAR to its URL; returns 1
# without redis-server. With "always", its AOF is on and fsynced before every
# reply (appendfsync always: every acknowledged write is durable); with
# "everysec" the AOF is fsynced once a second in the background. It is
# stopped with everything else.
start_redis() {
  command -v redis-server >/dev/null 2>&1 || return 1
  local port pid aof=(--appendonly no)
  [[ "${2:-}" == always || "${2:-}" == everysec ]] && aof=(--appendonly yes --appendfsync "$2")
  free_port port
  mkdir -p "$tmp/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --save "" "${aof[@]}" --dir "$tmp/redis-$port" \
    --logfile "$tmp/redis-$port.log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.05
  done
  printf -v "$1" %s "redis://127.0.0.1:$port/0"
}

# run_broker LABEL JSON STORE-FLAGS...: a broker on the given store and a
# gateway in front of it, the broker suite against them, both stopped after.
run_broker() {
  local label=$1 json=$2
  shift 2
  local b_grpc b_ops gw_port b_pid gw_pid bench_pid
  free_port b_grpc
  free_port b_ops
  free_port gw_port
  "$BIN/broker" serve "${TLS_BROKER[@]}" -grpc-addr "127.0.0.1:$b_grpc" -ops-addr "127.0.0.1:$b_ops" -log-level warn -registration approval \
    -public-url "http://127.0.0.1:$gw_port/broker/rest/searchbroker" "$@" 2>>"$tmp/broker.log" &
  b_pid=$!
  pids+=("$b_pid")
  wait_ready "http://127.0.0.1:$b_ops/readyz" "$b_pid" broker
  "$BIN/gateway" "${TLS_GATEWAY[@]}" "${GW_LOAD[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$grpc_port" -broker-addr "127.0.0.1:$b_grpc" \
    -jwks-url "" -log-level warn 2>>"$tmp/gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/health/groups" "$gw_pid" gateway
  echo >&2
  echo "bench: pass \"$label\": broker $* (pid $b_pid), gateway (pid $gw_pid)" >&2
  echo
  echo "### $label"
  echo
  "$BIN/fris-bench" -gateway "http://127.0.0.1:$gw_port" -suites broker -broker-admin "127.0.0.1:$b_grpc" "${TLS_ADMIN[@]}" \
    -broker-banks "$BROKER_BANKS" -broker-rate "$BROKER_BANKS" -broker-duration "$BROKER_DURATION" -warmup "$WARMUP" \
    -json "$json" -watch "gateway=$gw_pid,broker=$b_pid" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  kill -TERM "$gw_pid" "$b_pid" 2>/dev/null || true
  wait "$gw_pid" "$b_pid" 2>/dev/null || true
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

if selected broker; then
  run_broker "search broker on the embedded store (bbolt)" "${JSON%.json}-broker-bolt.json" -data-dir "$tmp/broker-bolt"
  if start_redis redis_url; then
    run_broker "search broker on Redis" "${JSON%.json}-broker-redis.json" -store redis -redis-url "$redis_url"
  else
    echo "bench: no redis-server: the broker suite on Redis is skipped" >&2
    echo
    echo "(broker on Redis skipped: no redis-server)"
  fi
fi
# run_upload LABEL JSON STORE STORE-FLAGS...: an upload service on the store
# and a gateway in front of it, one site's credentials, the upload suite.
# Values are not checked against the registry (-validation off): the suite
# measures the durable write path.
run_upload() {
  local label=$1 json=$2 store=$3
  shift 3
  local u_grpc u_ops gw_port u_pid gw_pid bench_pid metrics=""
  free_port u_grpc
  free_port u_ops
  free_port gw_port
  "$BIN/upload" serve "${TLS_UPLOAD[@]}" -grpc-addr "127.0.0.1:$u_grpc" -ops-addr "127.0.0.1:$u_ops" -log-level warn -validation off \
    ${UPLOAD_BATCH_DELAY:+-batch-delay "$UPLOAD_BATCH_DELAY"} "$@" 2>>"$tmp/upload.log" &
  u_pid=$!
  pids+=("$u_pid")
  wait_ready "http://127.0.0.1:$u_ops/readyz" "$u_pid" upload
  FRIS_BENCH_SITE_PASSWORD=$(rnd)
  export FRIS_BENCH_SITE_PASSWORD
  "$BIN/upload" create-credential "${TLS_ADMIN[@]}" -addr "127.0.0.1:$u_grpc" -site bench -teiler teiler1 \
    -password "$FRIS_BENCH_SITE_PASSWORD" bench-teiler1 >"$tmp/upload-seed.log" 2>&1 ||
    { failed=1; echo "bench: creating the upload credential failed" >&2; cat "$tmp/upload-seed.log" >&2; exit 1; }
  "$BIN/gateway" "${TLS_GATEWAY[@]}" "${GW_LOAD[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$grpc_port" -upload-addr "127.0.0.1:$u_grpc" \
    -jwks-url "" -log-level warn 2>>"$tmp/gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/health/groups" "$gw_pid" gateway
  [[ "$store" == bolt ]] && metrics="http://127.0.0.1:$u_ops/metrics"
  echo >&2
  echo "bench: pass \"$label\": upload $* (pid $u_pid), gateway (pid $gw_pid)" >&2
  echo
  echo "### $label"
  echo
  "$BIN/fris-bench" -gateway "http://127.0.0.1:$gw_port" -suites upload -upload-store "$store" \
    -upload-clients "$UPLOAD_CLIENTS" -upload-duration "$UPLOAD_DURATION" -warmup "$WARMUP" \
    -upload-metrics "$metrics" -fsync-dir "$tmp" -json "$json" -watch "gateway=$gw_pid,upload=$u_pid${redis_pid:+,redis=$redis_pid}" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  kill -TERM "$gw_pid" "$u_pid" 2>/dev/null || true
  wait "$gw_pid" "$u_pid" 2>/dev/null || true
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

if selected upload; then
  redis_pid=""
  run_upload "central upload on the embedded store (bbolt, -batch-delay ${UPLOAD_BATCH_DELAY:-2ms})" "${JSON%.json}-upload-bolt.json" bolt \
    -data-dir "$tmp/upload-bolt"
  if start_redis upload_redis always; then
    redis_pid=${pids[${#pids[@]}-1]}
    run_upload "central upload on Redis (appendfsync always, -batch-delay ${UPLOAD_BATCH_DELAY:-2ms})" "${JSON%.json}-upload-redis.json" redis \
      -store redis -redis-url "$upload_redis"
  else
    echo "bench: no redis-server: the upload suite on Redis is skipped" >&2
    echo
    echo "(upload on Redis skipped: no redis-server)"
  fi
fi

# free_cluster_port VAR: like free_port, for a cluster node: its bus port
# (port + 10000) must be free too, and both stay below the ephemeral range.
free_cluster_port() {
  local cand span=$((eph_lo - 30000))
  ((span >= 1000)) || span=1000
  for _ in $(seq 1 200); do
    cand=$((20000 + RANDOM % span))
    if [[ "$taken" != *" $cand "* && "$taken" != *" $((cand + 10000)) "* ]] && port_free "$cand" && port_free $((cand + 10000)); then
      taken+="$cand $((cand + 10000)) "
      printf -v "$1" %s "$cand"
      return 0
    fi
  done
  echo "bench: no free port pair for a cluster node found" >&2
  exit 1
}

# start_cluster VAR: a throwaway Redis Cluster (deploy/local/redis-cluster.sh,
# 3 masters with a replica each) on free ports, its AOF switched on with
# appendfsync everysec like the single Redis it is compared with; sets VAR
# to its URL and cluster_masters to the masters' ports. Returns 1 without
# redis-server or redis-cli.
cluster_masters=()
start_cluster() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || return 1
  local ports=() p url
  for _ in 1 2 3 4 5 6; do
    free_cluster_port p
    ports+=("$p")
  done
  cluster_dir="$tmp/cluster"
  url=$(deploy/local/redis-cluster.sh start "$cluster_dir" "${ports[@]}") ||
    { failed=1; echo "bench: the Redis Cluster did not start" >&2; exit 1; }
  for p in "${ports[@]}"; do
    redis-cli -p "$p" config set appendonly yes >/dev/null &&
      redis-cli -p "$p" config set appendfsync everysec >/dev/null ||
      { failed=1; echo "bench: switching on the AOF of cluster node $p failed" >&2; exit 1; }
    [[ "$(redis-cli -p "$p" role | head -n 1)" == master ]] && cluster_masters+=("$p")
  done
  ((${#cluster_masters[@]} == 3)) || { failed=1; echo "bench: want 3 cluster masters, see ${#cluster_masters[@]}" >&2; exit 1; }
  printf -v "$1" %s "$url"
}

# start_stack NAME URL: an auth service, an upload service and a gateway, all
# on the Redis at URL, seeded with the demo client and user and one upload
# credential for each of CLUSTER_SITES sites; sets stack_gw[NAME] and
# stack_watch[NAME] (fris-bench's -watch). Everything is stopped with the rest.
declare -A stack_gw stack_watch
start_stack() {
  local name=$1 url=$2
  local a_grpc a_ops u_grpc u_ops gw_port a_pid u_pid gw_pid i
  free_port a_grpc
  free_port a_ops
  free_port u_grpc
  free_port u_ops
  free_port gw_port
  FRIS_AUTH_KEY_SECRETS=$(head -c 32 /dev/urandom | base64) \
    "$BIN/auth" serve "${TLS_AUTH[@]}" -store redis -redis-url "$url" -data-dir "$tmp/auth-$name" \
    -grpc-addr "127.0.0.1:$a_grpc" -ops-addr "127.0.0.1:$a_ops" -issuer "http://127.0.0.1:$gw_port" \
    -log-level warn 2>>"$tmp/auth-$name.log" &
  a_pid=$!
  pids+=("$a_pid")
  "$BIN/upload" serve "${TLS_UPLOAD[@]}" -store redis -redis-url "$url" -grpc-addr "127.0.0.1:$u_grpc" -ops-addr "127.0.0.1:$u_ops" \
    -log-level warn -validation off ${UPLOAD_BATCH_DELAY:+-batch-delay "$UPLOAD_BATCH_DELAY"} 2>>"$tmp/upload-$name.log" &
  u_pid=$!
  pids+=("$u_pid")
  wait_ready "http://127.0.0.1:$a_ops/readyz" "$a_pid" "auth ($name)"
  wait_ready "http://127.0.0.1:$u_ops/readyz" "$u_pid" "upload ($name)"
  # A subshell with an exit per step: set -e does not act left of ||.
  (
    "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -client-id "$CLIENT_ID" -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name "fris-bench" -type MDR -redirect-url http://localhost:8888/callback || exit 1
    "$BIN/auth" create-user "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -email "$USER_EMAIL" -password "$FRIS_BENCH_USER_PASSWORD" \
      -name "Bench User" -email-verified || exit 1
    for i in $(seq 1 "$CLUSTER_SITES"); do
      "$BIN/upload" create-credential "${TLS_ADMIN[@]}" -addr "127.0.0.1:$u_grpc" -site "bench-$i" -teiler teiler1 \
        -password "$FRIS_BENCH_SITE_PASSWORD" "bench-teiler1-$i" || exit 1
    done
  ) >"$tmp/seed-$name.log" 2>&1 || { failed=1; echo "bench: seeding the $name stack failed" >&2; cat "$tmp/seed-$name.log" >&2; exit 1; }
  "$BIN/gateway" "${TLS_GATEWAY[@]}" "${GW_LOAD[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$grpc_port" -auth-addr "127.0.0.1:$a_grpc" \
    -upload-addr "127.0.0.1:$u_grpc" -jwks-url "http://127.0.0.1:$a_ops/jwks" -issuer "http://127.0.0.1:$gw_port" \
    -log-level warn 2>>"$tmp/gateway-$name.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/health/groups" "$gw_pid" "gateway ($name)"
  stack_gw[$name]="http://127.0.0.1:$gw_port"
  stack_watch[$name]="gateway=$gw_pid,auth=$a_pid,upload=$u_pid"
  echo "bench: cluster suite, $name stack on $url: auth pid $a_pid, upload pid $u_pid, gateway pid $gw_pid" >&2
}

# run_bench_bg ARGS...: fris-bench in the background (so a TERM reaches the
# trap at once), its tables to a log: the suite prints its own summary.
run_bench_bg() {
  local bench_pid
  "$BIN/fris-bench" "$@" >>"$tmp/cluster-runs.md" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
}

# master_keys: the masters' DBSIZE, space-separated, in cluster_masters order.
master_keys() {
  local p out=()
  for p in "${cluster_masters[@]}"; do out+=("$(redis-cli -p "$p" dbsize)"); done
  echo "${out[*]}"
}

run_cluster() {
  local single_url cluster_url round name json before after i up rf
  if ! start_redis single_url everysec || ! start_cluster cluster_url; then
    echo "bench: no redis-server or redis-cli: the cluster suite is skipped" >&2
    echo
    echo "(cluster suite skipped: no redis-server or redis-cli)"
    return 0
  fi
  FRIS_BENCH_SITE_PASSWORD=$(rnd)
  export FRIS_BENCH_SITE_PASSWORD
  start_stack single "$single_url"
  start_stack cluster "$cluster_url"
  local added=(0 0 0) rows=()
  for round in $(seq 1 "$CLUSTER_ROUNDS"); do
    for name in single cluster; do
      json="${JSON%.json}-cluster-$name-r$round"
      rm -f "$json-upload.json" "$json-refresh.json"
      echo "bench: cluster suite, round $round of $CLUSTER_ROUNDS, $name: uploads, then token refreshes" >&2
      [[ "$name" == cluster ]] && read -r -a before <<<"$(master_keys)"
      run_bench_bg -gateway "${stack_gw[$name]}" -suites upload -upload-store "redis-$name" -upload-site bench \
        -upload-user bench-teiler1 -upload-sites "$CLUSTER_SITES" -upload-clients "$UPLOAD_CLIENTS" \
        -upload-duration "$CLUSTER_DURATION" -warmup "$WARMUP" -fsync-dir "$tmp" -fsync-duration 500ms \
        -json "$json-upload.json" -watch "${stack_watch[$name]}"
      if [[ "$name" == cluster ]]; then
        read -r -a after <<<"$(master_keys)"
        for i in 0 1 2; do added[i]=$((added[i] + after[i] - before[i])); done
      fi
      run_bench_bg -gateway "${stack_gw[$name]}" -suites auth -token-flows refresh -token-rounds 1 \
        -token-connections "$TOKEN_CONNECTIONS" -token-duration "$CLUSTER_DURATION" -warmup "$WARMUP" -rsa-duration 1s \
        -flow-procs "$FLOW_PROCS" -flow-batch="$FLOW_BATCH" -client-id "$CLIENT_ID" -user-email "$USER_EMAIL" \
        -json "$json-refresh.json" -watch "${stack_watch[$name]}"
      # A run that failed wrote no numbers: it counts as 0 (and rc is set).
      up=$(jq -r '"\(.upload.result.units_per_sec) \(.upload.result.unit_p99_ms)"' "$json-upload.json" 2>/dev/null) || up="0 0"
      rf=$(jq -r '"\(.token.flows[0].measurement.units_per_sec) \(.token.flows[0].measurement.unit_p99_ms)"' "$json-refresh.json" 2>/dev/null) || rf="0 0"
      rows+=("$round $name $up $rf")
    done
  done
  echo
  echo "### Redis Cluster (3 masters, 3 replicas) next to a single Redis, both appendfsync everysec"
  echo
  echo "Each round: $UPLOAD_CLIENTS clients uploading new 5 KB patients to $CLUSTER_SITES sites round robin, then $TOKEN_CONNECTIONS connections refreshing tokens; $WARMUP warm-up + $CLUSTER_DURATION measured each, rounds alternating single and cluster."
  echo
  printf '%s\n' "${rows[@]}" | awk -v rounds="$CLUSTER_ROUNDS" '
    { up[$2] += $3; up99[$2] = (up99[$2] > $4 ? up99[$2] : $4); rf[$2] += $5; rf99[$2] = (rf99[$2] > $6 ? rf99[$2] : $6)
      line[NR] = sprintf("| %d | %s | %.0f | %.1f ms | %.0f | %.1f ms |", $1, $2, $3, $4, $5, $6) }
    END {
      print "| round | store | uploads/s | upload p99 | refreshes/s | refresh p99 |"
      print "|---:|---|---:|---:|---:|---:|"
      for (i = 1; i <= NR; i++) print line[i]
      for (s = 0; s < 2; s++) {
        n = s ? "cluster" : "single"
        printf "| mean | **%s** | **%.0f** | %.1f ms (worst) | **%.0f** | %.1f ms (worst) |\n", n, up[n] / rounds, up99[n], rf[n] / rounds, rf99[n]
      }
      ru = up["single"] ? up["cluster"] / up["single"] : 0
      rr = rf["single"] ? rf["cluster"] / rf["single"] : 0
      printf "| | **cluster/single** | **%.0f %%** | | **%.0f %%** | |\n\n", ru * 100, rr * 100
      printf "Target: the cluster at least 80 %% of a single Redis: uploads %s, refreshes %s.\n", (ru >= 0.8 ? "met" : "NOT met"), (rr >= 0.8 ? "met" : "NOT met")
    }'
  echo
  echo "Keys the cluster's upload runs added on each master ($CLUSTER_SITES sites, DBSIZE after minus before each run):"
  echo
  printf '%s\n' "${cluster_masters[@]}" | paste -d' ' - <(printf '%s\n' "${added[@]}") | awk '
    { port[NR] = $1; n[NR] = $2; sum += $2 }
    END {
      mean = sum / NR; worst = 0
      print "| master | keys added | deviation from the mean |"
      print "|---|---:|---:|"
      for (i = 1; i <= NR; i++) {
        d = mean ? (n[i] - mean) / mean * 100 : 0
        ad = d < 0 ? -d : d
        if (ad > worst) worst = ad
        printf "| 127.0.0.1:%s | %d | %+.1f %% |\n", port[i], n[i], d
      }
      printf "\nTarget: every master within ±25 %% of the mean (%.0f keys): %s (worst %.1f %%).\n", mean, (worst <= 25 && sum > 0 ? "met" : "NOT met"), worst
    }'
  echo "bench: the cluster suite's fris-bench tables were written to a log; raw numbers in ${JSON%.json}-cluster-*.json" >&2
}

if selected cluster; then
  command -v jq >/dev/null 2>&1 || { failed=1; echo "bench: the cluster suite needs jq" >&2; exit 1; }
  run_cluster
fi

# run_guess LABEL JSON: an auth service of its own, as deployed except that
# no verified password is remembered (-secret-cache-ttl 0: each of the real
# user's sign-ins hashes, as a first sign-in does), the demo client and a
# user, a gateway, and the guess suite.
run_guess() {
  local label=$1 json=$2
  local a_grpc a_ops gw_port a_pid gw_pid bench_pid
  free_port a_grpc
  free_port a_ops
  free_port gw_port
  FRIS_AUTH_KEY_SECRETS=$(head -c 32 /dev/urandom | base64) \
    "$BIN/auth" serve "${TLS_AUTH[@]}" -data-dir "$tmp/guess" -grpc-addr "127.0.0.1:$a_grpc" -ops-addr "127.0.0.1:$a_ops" \
    -issuer "http://127.0.0.1:$gw_port" -secret-cache-ttl 0 -log-level error 2>>"$tmp/auth-guess.log" &
  a_pid=$!
  pids+=("$a_pid")
  wait_ready "http://127.0.0.1:$a_ops/readyz" "$a_pid" auth
  {
    "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -client-id "$CLIENT_ID" -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name "fris-bench" -type MDR -redirect-url http://localhost:8888/callback &&
      "$BIN/auth" create-user "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -email "$USER_EMAIL" -password "$FRIS_BENCH_USER_PASSWORD" \
        -name "Bench User" -email-verified
  } >"$tmp/guess-seed.log" 2>&1 || { failed=1; echo "bench: seeding the guess suite's auth service failed" >&2; cat "$tmp/guess-seed.log" >&2; exit 1; }
  "$BIN/gateway" "${TLS_GATEWAY[@]}" "${GW_LOAD[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$grpc_port" -auth-addr "127.0.0.1:$a_grpc" \
    -jwks-url "http://127.0.0.1:$a_ops/jwks" -issuer "http://127.0.0.1:$gw_port" -log-level error 2>>"$tmp/gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://127.0.0.1:$gw_port/health/groups" "$gw_pid" gateway
  echo >&2
  echo "bench: pass \"$label\": auth -secret-cache-ttl 0 (pid $a_pid), gateway (pid $gw_pid)" >&2
  echo
  echo "### $label"
  echo
  "$BIN/fris-bench" -gateway "http://127.0.0.1:$gw_port" -suites guess -client-id "$CLIENT_ID" -user-email "$USER_EMAIL" \
    -guessers "$GUESSERS" -guess-duration "$GUESS_DURATION" -warmup "$WARMUP" -json "$json" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  kill -TERM "$gw_pid" "$a_pid" 2>/dev/null || true
  wait "$gw_pid" "$a_pid" 2>/dev/null || true
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

if selected guess; then
  run_guess "login under guessing (abuse limits as deployed)" "${JSON%.json}-guess.json"
fi
# start_demo_stack NAME: the five processes as `make run` starts them (the
# same flags, the embedded store, the Explorer's client), on a data
# directory of their own ($tmp/NAME), seeded as `make run` seeds. Sets
# a_pid m_pid u_pid b_pid gw_pid, gw (host:port), a_ops, u_ops, b_admin
# (the broker's gRPC address), demo_inquiry (the demo inquiry's id) and
# site1_pass (the password of the site credential charite-teiler1).
# DEMO_BROKER_ARGS and DEMO_GATEWAY_ARGS (arrays) add flags.
start_demo_stack() {
  local name=$1 dir=$tmp/$1
  local a_grpc m_grpc m_ops u_grpc b_grpc b_ops gw_port v
  for v in a_grpc a_ops m_grpc m_ops u_grpc u_ops b_grpc b_ops gw_port; do free_port "$v"; done
  gw="127.0.0.1:$gw_port"
  mkdir -p "$dir"
  (umask 077 && head -c 32 /dev/urandom | base64 >"$dir/auth-key-secret" && rnd >"$dir/explorer-client-secret")
  "$BIN/auth" serve "${TLS_AUTH[@]}" -data-dir "$dir" -grpc-addr "127.0.0.1:$a_grpc" -ops-addr "127.0.0.1:$a_ops" \
    -issuer "http://$gw" -key-secret-file "$dir/auth-key-secret" 2>>"$tmp/$name-auth.log" &
  a_pid=$!
  pids+=("$a_pid")
  "$BIN/mdr" serve "${TLS_MDR[@]}" -data-dir "$dir" -grpc-addr "127.0.0.1:$m_grpc" -ops-addr "127.0.0.1:$m_ops" \
    2>>"$tmp/$name-mdr.log" &
  m_pid=$!
  pids+=("$m_pid")
  "$BIN/upload" serve "${TLS_UPLOAD[@]}" -data-dir "$dir" -grpc-addr "127.0.0.1:$u_grpc" -ops-addr "127.0.0.1:$u_ops" \
    -mdr-addr "127.0.0.1:$m_grpc" -validation warn 2>>"$tmp/$name-upload.log" &
  u_pid=$!
  pids+=("$u_pid")
  "$BIN/broker" serve "${TLS_BROKER[@]}" -data-dir "$dir" -grpc-addr "127.0.0.1:$b_grpc" -ops-addr "127.0.0.1:$b_ops" \
    -registration activation-code -public-url "http://$gw/broker/rest/searchbroker" ${DEMO_BROKER_ARGS[@]+"${DEMO_BROKER_ARGS[@]}"} 2>>"$tmp/$name-broker.log" &
  b_pid=$!
  pids+=("$b_pid")
  b_admin="127.0.0.1:$b_grpc"
  wait_ready "http://127.0.0.1:$a_ops/readyz" "$a_pid" auth
  wait_ready "http://127.0.0.1:$m_ops/readyz" "$m_pid" mdr
  wait_ready "http://127.0.0.1:$u_ops/readyz" "$u_pid" upload
  wait_ready "http://127.0.0.1:$b_ops/readyz" "$b_pid" broker
  # The demo data of `make run`: the registry, the demo client, the
  # Explorer's client, the researcher with all three roles, two sites'
  # credentials, the two sites in the broker's site registry and the demo
  # inquiry.
  local site2 user_id
  site1_pass=$(rnd) site2=$(rnd)
  {
    "$BIN/mdr" import "${TLS_ADMIN[@]}" -addr "127.0.0.1:$m_grpc" -if-empty services/mdr/demo/mdr16.json &&
      "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -client-id fris-demo -secret "$FRIS_BENCH_CLIENT_SECRET" \
        -name "FRIS demo client" -type MDR -redirect-url http://localhost:8888/callback &&
      "$BIN/auth" create-client "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -client-id fris-explorer \
        -secret "$(cat "$dir/explorer-client-secret")" -name "FRIS Explorer" -redirect-url "http://$gw/explorer/callback" &&
      "$BIN/auth" create-user "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -email "$USER_EMAIL" -password "$FRIS_BENCH_USER_PASSWORD" \
        -name "Demo Researcher" -email-verified &&
      "$BIN/auth" set-scopes "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" -scopes broker:researcher,users:search,fris:operator "$USER_EMAIL" &&
      "$BIN/upload" create-credential "${TLS_ADMIN[@]}" -addr "127.0.0.1:$u_grpc" -site charite -teiler teiler1 \
        -password "$site1_pass" charite-teiler1 &&
      "$BIN/upload" create-credential "${TLS_ADMIN[@]}" -addr "127.0.0.1:$u_grpc" -site dresden -teiler teiler1 \
        -password "$site2" dresden-teiler1 &&
      user_id=$("$BIN/auth" users "${TLS_ADMIN[@]}" -addr "127.0.0.1:$a_grpc" | awk -v e="$USER_EMAIL" '$2 == e { print $1 }') &&
      "$BIN/broker" create-site "${TLS_ADMIN[@]}" -addr "127.0.0.1:$b_grpc" -if-missing -id charite -name-de Charité -name-en Charité &&
      "$BIN/broker" create-site "${TLS_ADMIN[@]}" -addr "127.0.0.1:$b_grpc" -if-missing -id dresden -name-de Dresden -name-en Dresden &&
      demo_inquiry=$("$BIN/broker" seed-demo "${TLS_ADMIN[@]}" -addr "127.0.0.1:$b_grpc" -author "$user_id" -sites charite,dresden)
  } >"$tmp/$name-seed.log" 2>&1 || { failed=1; echo "bench: seeding the $name suite failed" >&2; cat "$tmp/$name-seed.log" >&2; exit 1; }
  "$BIN/gateway" "${TLS_GATEWAY[@]}" -addr "$gw" -ops-addr "" -mdr-addr "127.0.0.1:$m_grpc" -auth-addr "127.0.0.1:$a_grpc" \
    -broker-addr "127.0.0.1:$b_grpc" -upload-addr "127.0.0.1:$u_grpc" -jwks-url "http://127.0.0.1:$a_ops/jwks" -issuer "http://$gw" \
    -explorer-client-id fris-explorer -explorer-client-secret-file "$dir/explorer-client-secret" ${DEMO_GATEWAY_ARGS[@]+"${DEMO_GATEWAY_ARGS[@]}"} 2>>"$tmp/$name-gateway.log" &
  gw_pid=$!
  pids+=("$gw_pid")
  wait_ready "http://$gw/readyz" "$gw_pid" gateway
  wait_ready "http://$gw/health/groups" "$gw_pid" gateway
}

stop_demo_stack() {
  kill -TERM "$gw_pid" "$a_pid" "$m_pid" "$u_pid" "$b_pid" 2>/dev/null || true
  wait "$gw_pid" "$a_pid" "$m_pid" "$u_pid" "$b_pid" 2>/dev/null || true
}

# run_memory LABEL: the demo stack; then, after MEMORY_IDLE without a
# request, each process's resident memory. The seeding hashes passwords and
# secrets with argon2id, whose buffers the services hand back 2 s after the
# last hash: the wait lets that happen, as it does after a real `make run`.
run_memory() {
  local label=$1
  start_demo_stack memory
  echo >&2
  echo "bench: pass \"$label\": auth $a_pid, mdr $m_pid, upload $u_pid, broker $b_pid, gateway $gw_pid; idle for $MEMORY_IDLE" >&2
  sleep "$MEMORY_IDLE"
  echo
  echo "### $label"
  echo
  # MiB, as ps and top count (VmRSS is in KiB).
  echo "| process | VmRSS | VmHWM (peak) |"
  echo "|---|---:|---:|"
  local name pid rss hwm total=0
  for name in auth mdr upload broker gateway; do
    case $name in
      auth) pid=$a_pid ;; mdr) pid=$m_pid ;; upload) pid=$u_pid ;; broker) pid=$b_pid ;; gateway) pid=$gw_pid ;;
    esac
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || true
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || true
    [[ -n "$rss" ]] || { failed=1; echo "bench: $name (pid $pid) has no VmRSS: did it exit?" >&2; exit 1; }
    total=$((total + rss))
    awk -v n="$name" -v r="$rss" -v h="$hwm" 'BEGIN { printf "| %s | %.1f MiB | %.1f MiB |\n", n, r / 1024, h / 1024 }'
  done
  awk -v t="$total" -v g="$MEMORY_TARGET_MB" 'BEGIN {
    mb = t / 1024
    printf "| **total** | **%.1f MiB** | |\n\ntarget: under %d MiB in all: %s\n", mb, g, (mb < g ? "met" : "NOT met")
  }'
  stop_demo_stack
}

# run_attack LABEL JSON: the demo stack as `make run` starts it (no
# -trusted-proxies: every loopback address is a client of its own); the
# attack suite signs in as the researcher with the demo client and uploads
# as charite-teiler1 from 127.0.0.1 while each attack comes from 127.0.x.y.
# The gateway's and upload's VmRSS before and after are printed too.
run_attack() {
  local label=$1 json=$2 bench_pid
  start_demo_stack attack
  echo >&2
  echo "bench: pass \"$label\": auth $a_pid, upload $u_pid, gateway $gw_pid" >&2
  echo
  echo "### $label"
  echo
  local rss_before
  rss_before=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$gw_pid/status")/$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$u_pid/status")
  FRIS_BENCH_SITE_PASSWORD=$site1_pass "$BIN/fris-bench" -gateway "http://$gw" -suites attack -client-id fris-demo -user-email "$USER_EMAIL" \
    -upload-site charite -upload-teiler teiler1 -upload-user charite-teiler1 -attack-duration "$ATTACK_DURATION" \
    -warmup "$WARMUP" ${ATTACKS:+-attacks "$ATTACKS"} -json "$json" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  echo
  echo "VmRSS (MiB) of gateway/upload before the attacks: $rss_before; after: $(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$gw_pid/status")/$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$u_pid/status")"
  stop_demo_stack
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

if selected attack; then
  run_attack "a user and a connector under attack (make run's stack and defaults)" "${JSON%.json}-attack.json"
fi

if selected memory; then
  run_memory "idle memory after a fresh make run (five processes, embedded store, demo data)"
fi

# run_streams LABEL NAME JSON [GATEWAY FLAGS...]: the demo stack (the
# broker with -registration approval), two banks registered through the
# gateway and approved for the demo inquiry's sites, then the streams
# suite on the demo inquiry.
run_streams() {
  local label=$1 name=$2 json=$3 bench_pid tokens="" site email tok
  shift 3
  DEMO_BROKER_ARGS=(-registration approval)
  # The streams are one user's standing for many researchers': the
  # per-subject caps would refuse all but 32 of them.
  DEMO_GATEWAY_ARGS=(-max-conns-per-subject 0 -max-inflight-per-subject 0 "$@")
  start_demo_stack "$name"
  DEMO_BROKER_ARGS=() DEMO_GATEWAY_ARGS=()
  for site in charite dresden; do
    email="bank@$site.example"
    tok=$(curl -fsS -X PUT -H "Accept: text/plain" "http://$gw/broker/rest/searchbroker/banks/$email") &&
      "$BIN/broker" approve-bank "${TLS_ADMIN[@]}" -addr "$b_admin" -site "$site" "$email" >>"$tmp/$name-seed.log" 2>&1 ||
      { failed=1; echo "bench: registering the streams suite's bank $email failed" >&2; exit 1; }
    tokens+="${tokens:+,}$email=$tok"
  done
  echo >&2
  echo "bench: pass \"$label\": auth $a_pid, mdr $m_pid, upload $u_pid, broker $b_pid, gateway $gw_pid; inquiry $demo_inquiry" >&2
  echo
  echo "### $label"
  echo
  FRIS_BENCH_BANK_TOKENS=$tokens "$BIN/fris-bench" -gateway "http://$gw" -suites streams -user-email "$USER_EMAIL" \
    -streams "$STREAMS" -streams-replies "$STREAMS_REPLIES" -streams-idle "$STREAMS_IDLE" -streams-inquiry "$demo_inquiry" \
    -streams-idle-target-mib "$MEMORY_TARGET_MB" -watch "auth=$a_pid,mdr=$m_pid,upload=$u_pid,broker=$b_pid,gateway=$gw_pid" -json "$json" &
  bench_pid=$!
  pids=("$bench_pid" "${pids[@]}")
  wait "$bench_pid" || rc=$?
  pids=("${pids[@]:1}")
  stop_demo_stack
  [[ -s "$json" ]] && echo "bench: raw numbers in $json" >&2
}

if selected streams; then
  run_streams "results streams of one inquiry, shared (as deployed)" streams "${JSON%.json}-streams.json"
  run_streams "results streams of one inquiry, each its own (-explorer-share-streams=false, the baseline)" streams-own "${JSON%.json}-streams-own.json" -explorer-share-streams=false
fi
echo "bench: load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2

# Anything a service logged at warn or above during the run is worth seeing;
# the audit events share stderr (no -audit-log here) and are not.
for log in "$tmp/mdr.log" "$tmp/auth.log" "$tmp/gateway.log" "$tmp/upload.log"; do
  [[ -s "$log" ]] || continue
  lines=$(grep -v '"log":"audit"' "$log" | tail -n 20 || true)
  if [[ -n "$lines" ]]; then
    echo "--- $(basename "$log") (warn and above):" >&2
    printf '%s\n' "$lines" >&2
  fi
done
((rc == 0)) || failed=1
exit "$rc"
