#!/usr/bin/env bash
# Redis sizing for the upload store: how much memory and how many keys a
# patient costs, measured, then extrapolated to 100,000 patients.
#
#   tools/redis-sizing.sh            (after make build; ~1 min)
#
# Starts a throwaway Redis Cluster (deploy/local/redis-cluster.sh: 3 masters,
# one replica each, in memory, free loopback ports), an upload service on it
# (-validation off: checks against the registry store nothing) and a gateway,
# creates SIZING_SITES sites' credentials, PUTs SIZING_PATIENTS patients
# (the demo patient, services/upload/demo/patient.xml, its id DEMO-0001
# replaced by one of the same length per patient, spread over the sites) through the gateway, and reads INFO memory
# (used_memory) and DBSIZE of every master before and after. Without
# redis-cli it says so and stops. Prints a Markdown table; deploy/README.md,
# "Sizing", quotes it.
#
# Environment:
#   SIZING_PATIENTS  patients uploaded                   (3000)
#   SIZING_SITES     sites (one teiler each)             (20)
#   SIZING_DOC       the document uploaded               (services/upload/demo/patient.xml)
#   SIZING_CLIENTS   concurrent uploads                  (8)
#   BIN              where make put the binaries         (bin)
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
PATIENTS=${SIZING_PATIENTS:-3000}
SITES=${SIZING_SITES:-20}
DOC=${SIZING_DOC:-services/upload/demo/patient.xml}
CLIENTS=${SIZING_CLIENTS:-8}
for b in upload gateway fris-certs; do
  [[ -x "$BIN/$b" ]] || { echo "sizing: $BIN/$b missing: run make build" >&2; exit 1; }
done
for c in redis-server redis-cli curl; do
  command -v "$c" >/dev/null 2>&1 || { echo "sizing: $c not found" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fris-sizing.XXXXXX")
pids=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  ((${#pids[@]})) && { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
  deploy/local/redis-cluster.sh stop "$tmp/cluster" 2>/dev/null || true
  if ((rc)); then
    for log in "$tmp"/*.log; do [[ -s "$log" ]] && { echo "--- $log" >&2; tail -n 20 "$log" >&2; }; done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
taken=" "
free_port() { # free_port VAR [BUS]: a free port (with BUS: its +10000 too)
  local p
  for _ in $(seq 1 200); do
    p=$((12000 + RANDOM % 8000))
    [[ "$taken" == *" $p "* ]] && continue
    port_free "$p" || continue
    [[ -n "${2:-}" ]] && ! port_free $((p + 10000)) && continue
    taken+="$p "
    printf -v "$1" %s "$p"
    return 0
  done
  echo "sizing: no free port" >&2
  exit 1
}
wait_ready() { # wait_ready URL NAME
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "sizing: $2 did not become ready" >&2
  exit 1
}

ports=()
for _ in 1 2 3 4 5 6; do free_port node bus; ports+=("$node"); done
url=$(deploy/local/redis-cluster.sh start "$tmp/cluster" "${ports[@]}")
masters() { # the masters' ports, from any node's view
  redis-cli -p "${ports[0]}" cluster nodes | awk '$3 ~ /master/ { split($2, a, "[:@]"); print a[2] }' | sort -n
}
# mem_keys: "port used_memory dbsize" per master.
mem_keys() {
  local p
  for p in $(masters); do
    echo "$p $(redis-cli -p "$p" info memory | tr -d '\r' | sed -n 's/^used_memory://p') $(redis-cli -p "$p" dbsize)"
  done
}

"$BIN/fris-certs" -dir "$tmp/tls" >/dev/null
tls() { TLS=(-tls-cert "$tmp/tls/$1.pem" -tls-key "$tmp/tls/$1-key.pem" -tls-ca "$tmp/tls/ca.pem"); }
free_port u_grpc
free_port u_ops
free_port gw_port
free_port mdr_unused
tls upload
"$BIN/upload" serve "${TLS[@]}" -grpc-addr "127.0.0.1:$u_grpc" -ops-addr "127.0.0.1:$u_ops" -store redis -redis-url "$url" \
  -validation off -log-level warn 2>>"$tmp/upload.log" &
pids+=($!)
wait_ready "http://127.0.0.1:$u_ops/readyz" upload

tls admin
pw=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
for i in $(seq -w 1 "$SITES"); do
  "$BIN/upload" create-credential "${TLS[@]}" -addr "127.0.0.1:$u_grpc" -site "site$i" -teiler teiler1 -password "$pw" \
    "site$i-teiler1" >>"$tmp/seed.log" 2>&1
done
# Measured from here: the patients alone, not the sites' credentials.
before=$(mem_keys)
tls gateway
"$BIN/gateway" "${TLS[@]}" -addr "127.0.0.1:$gw_port" -ops-addr "" -mdr-addr "127.0.0.1:$mdr_unused" -upload-addr "127.0.0.1:$u_grpc" \
  -jwks-url "" -log-level warn 2>>"$tmp/gateway.log" &
pids+=($!)
wait_ready "http://127.0.0.1:$gw_port/readyz" gateway

# The password goes to curl through a config file, not the command line.
for i in $(seq -w 1 "$SITES"); do
  (umask 077 && printf 'user = "site%s-teiler1:%s"\n' "$i" "$pw" >"$tmp/site$i.curl")
done
start=$(date +%s.%N)
seq 1 "$PATIENTS" | awk -v s="$SITES" '{ printf "%0*d S-%07d\n", length(s), ($1 % s) + 1, $1 }' |
  xargs -P "$CLIENTS" -n 2 sh -c 'sed "s/DEMO-0001/$4/g" "$1" | curl --fail-with-body -sS -o /dev/stderr -K "$0/site$3.curl" -X PUT \
    -H "Content-Type: application/xml" --data-binary @- "$2/dktk/sites/site$3_teiler/teiler1/pats/$4"' "$tmp" "$DOC" "http://127.0.0.1:$gw_port" 2>>"$tmp/curl.log" ||
  { echo "sizing: an upload failed" >&2; exit 1; }
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
after=$(mem_keys)

doc_bytes=$(wc -c <"$DOC")
echo "sizing: $PATIENTS patients of $doc_bytes bytes over $SITES sites in $secs s, Redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')" >&2
echo
echo "| master | keys | used_memory (MiB) | keys added | memory added (MiB) |"
echo "|---|---:|---:|---:|---:|"
join <(echo "$before") <(echo "$after") | awk '{
  printf "| %s | %d | %.1f | %d | %.1f |\n", $1, $5, $4 / 1048576, $5 - $3, ($4 - $2) / 1048576
}'
join <(echo "$before") <(echo "$after") | awk -v n="$PATIENTS" -v d="$doc_bytes" '
  { keys += $5 - $3; mem += $4 - $2; k[NR] = $5 - $3 }
  END {
    mean = keys / NR; dev = 0
    for (i in k) { x = (k[i] - mean) / mean; if (x < 0) x = -x; if (x > dev) dev = x }
    printf "\nper patient: %.2f keys, %.0f bytes of used_memory (document %d bytes, %.2f x)\n", keys / n, mem / n, d, mem / n / d
    printf "per 100,000 patients: %.0f keys (%.0f per master of %d), %.0f MiB on the masters (as many again on the replicas)\n",
      keys / n * 100000, keys / n * 100000 / NR, NR, mem / n * 100000 / 1048576
    printf "keys per master within %.0f %% of the mean\n", dev * 100
  }'
