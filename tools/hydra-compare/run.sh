#!/usr/bin/env bash
# tools/hydra-compare/run.sh (make hydra-compare, after make build): FRIS
# next to Ory Hydra on the same cores, in interleaved rounds. README.md next
# to this file explains it; it is not part of make test or make bench.
#
# 1. builds Hydra once into $HYDRA_CACHE (a copy of its module from the Go
#    module proxy, never in the repository; CGO off, Postgres only), nice
# 2. creates a throwaway Postgres database, migrates it, starts Hydra with
#    JWT access tokens and imports one RSA-2048 key (RS256) into the id-token
#    and access-token key sets (the size and algorithm of FRIS's signing
#    key: FRIS never exports its private key, it is sealed at rest)
# 3. starts auth, mdr and a gateway on a temporary data directory, seeds an
#    RS256 client, an ES256 client and a user as make bench does
# 4. runs fris-bench -suites hydra: per round the spec-shaped FRIS refresh,
#    the OAuth 2.0 FRIS refresh, the same for an ES256 client, Hydra's
#    refresh (public client, PKCE sign-ins accepted through Hydra's admin
#    API), then Hydra's introspection,
#    FRIS's introspection and the gateway's own check of a bearer token
#    (403 insufficient_scope once verified), and the same without a token
# Everything is stopped and removed afterwards, the database dropped.
#
# Environment:
#   HYDRA_VERSION            the module version built   (v2.3.0: the newest the module proxy serves)
#   HYDRA_CACHE              where it is built           ($HOME/.cache/fris/hydra)
#   HYDRA_PG                 Postgres, libpq URL without the database (postgres://postgres@127.0.0.1:5432)
#   COMPARE_ROUNDS           interleaved rounds          (3)
#   COMPARE_TOKEN_DURATION   measured time of each refresh variant per round (4s)
#   COMPARE_DURATION         measured time of each token check per round     (4s)
#   COMPARE_WARMUP           discarded warm-up of each                       (2s)
#   COMPARE_TOKEN_CONNECTIONS connections of the refresh variants            (16)
#   COMPARE_CONNECTIONS      connections of the token checks                 (16)
#   COMPARE_JSON             raw numbers                 (bench/results/hydra-compare.json)
#   BENCH_LOCK               held for the whole run, shared with make bench (/tmp/fris-bench.lock)
#   BIN                      where make put FRIS's binaries (bin)
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin}
HYDRA_VERSION=${HYDRA_VERSION:-v2.3.0}
HYDRA_CACHE=${HYDRA_CACHE:-$HOME/.cache/fris/hydra}
HYDRA_PG=${HYDRA_PG:-postgres://postgres@127.0.0.1:5432}
ROUNDS=${COMPARE_ROUNDS:-3}
TOKEN_DURATION=${COMPARE_TOKEN_DURATION:-4s}
DURATION=${COMPARE_DURATION:-4s}
WARMUP=${COMPARE_WARMUP:-2s}
TOKEN_CONNECTIONS=${COMPARE_TOKEN_CONNECTIONS:-16}
CONNECTIONS=${COMPARE_CONNECTIONS:-16}
JSON=${COMPARE_JSON:-bench/results/hydra-compare.json}

# The same lock as make bench: two benchmarks at once measure each other.
lock=${BENCH_LOCK:-${TMPDIR:-/tmp}/fris-bench.lock}
exec 9>"$lock"
if ! flock -n 9; then
  echo "hydra-compare: another benchmark holds $lock; waiting for it to end" >&2
  flock 9
fi

for b in auth mdr gateway fris-certs; do
  [[ -x "$BIN/$b" ]] || { echo "hydra-compare: $BIN/$b missing: run make build" >&2; exit 1; }
done
for c in go psql openssl curl; do
  command -v "$c" >/dev/null || { echo "hydra-compare: $c not found (README.md lists what it needs)" >&2; exit 1; }
done

# 1. Hydra, built once per version.
hydra="$HYDRA_CACHE/hydra-$HYDRA_VERSION"
if [[ ! -x "$hydra" ]]; then
  echo "hydra-compare: building Ory Hydra $HYDRA_VERSION in $HYDRA_CACHE (once; 10-20 min on 2 busy cores)" >&2
  mkdir -p "$HYDRA_CACHE"
  # Built in a copy of its own module, so its replace directives hold (a
  # module requiring Hydra would ignore them and get the wrong pop). The
  # module's zip lacks internal/httpclient (a nested module), so the CLI
  # takes the published hydra-client-go it names instead.
  mod=$(go mod download -json "github.com/ory/hydra/v2@$HYDRA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$mod" ]] || { echo "hydra-compare: github.com/ory/hydra/v2@$HYDRA_VERSION not downloadable" >&2; exit 1; }
  src="$HYDRA_CACHE/src-$HYDRA_VERSION"
  rm -rf "$src"
  cp -r "$mod" "$src"
  chmod -R u+w "$src"
  sed -i '/^replace github.com\/ory\/hydra-client-go\/v2 /d' "$src/go.mod"
  (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 go build -p 2 -o "$hydra.tmp" .)
  mv "$hydra.tmp" "$hydra"
  rm -rf "$src"
fi
go build -o "$BIN/fris-bench" ./tools/fris-bench

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hydra-compare.XXXXXX")
db="hydra_compare_$$"
pids=()
db_made=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  ((db_made)) && psql "$HYDRA_PG/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
  if ((rc)); then
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
free_port() { # free_port VAR: a free loopback port below the ephemeral range
  local p
  for _ in $(seq 1 100); do
    p=$((10000 + RANDOM % 20000))
    if [[ "$taken" != *" $p "* ]] && port_free "$p"; then
      taken+="$p "
      printf -v "$1" %s "$p"
      return 0
    fi
  done
  echo "hydra-compare: no free port found" >&2
  exit 1
}
wait_ready() { # wait_ready URL PID NAME (60 s at most)
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { echo "hydra-compare: $3 exited" >&2; exit 1; }
    sleep 0.1
  done
  echo "hydra-compare: $3 did not become ready" >&2
  exit 1
}

# 2. Hydra on a throwaway database.
psql "$HYDRA_PG/postgres" -qc "CREATE DATABASE $db" >/dev/null
db_made=1
free_port hydra_public
free_port hydra_admin
cat >"$tmp/hydra.yml" <<EOF
dsn: $HYDRA_PG/$db?sslmode=disable
serve:
  public: {host: 127.0.0.1, port: $hydra_public}
  admin: {host: 127.0.0.1, port: $hydra_admin}
urls:
  self: {issuer: "http://127.0.0.1:$hydra_public"}
  login: http://127.0.0.1:9/login
  consent: http://127.0.0.1:9/consent
secrets:
  system: ["$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"]
strategies:
  access_token: jwt
log:
  level: warn
EOF
"$hydra" migrate sql up --read-from-env --yes --config "$tmp/hydra.yml" >"$tmp/hydra-migrate.log" 2>&1
"$hydra" serve all --dev --config "$tmp/hydra.yml" >>"$tmp/hydra.log" 2>&1 &
hydra_pid=$!
pids+=("$hydra_pid")
wait_ready "http://127.0.0.1:$hydra_admin/health/ready" "$hydra_pid" hydra

# One RSA-2048 key for both sets, replacing the keys Hydra made itself.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$tmp/key.pem" 2>/dev/null
for set in hydra.openid.id-token hydra.jwt.access-token; do
  "$hydra" delete jwk "$set" --endpoint "http://127.0.0.1:$hydra_admin" >>"$tmp/hydra-keys.log" 2>&1 || true
  "$hydra" import jwk "$set" "$tmp/key.pem" --use sig --alg RS256 --endpoint "http://127.0.0.1:$hydra_admin" >>"$tmp/hydra-keys.log" 2>&1
done
# Hydra must publish the imported keys and no other (fris-bench then shows
# the kids its tokens carry).
imported=$(awk '$3 == "RS256" && $1 ~ /^hydra\./ {print $2}' "$tmp/hydra-keys.log" | sort -u | tr '\n' ' ')
published=$(curl -fsS "http://127.0.0.1:$hydra_public/.well-known/jwks.json" | grep -o '"kid":"[^"]*"' | cut -d'"' -f4 | sort -u | tr '\n' ' ')
if [[ -z "$imported" || "$imported" != "$published" ]]; then
  echo "hydra-compare: Hydra publishes keys \"$published\", imported \"$imported\"" >&2
  exit 1
fi
echo "hydra-compare: Hydra $HYDRA_VERSION (pid $hydra_pid) signs with the imported RSA-2048 key, kids $imported" >&2

# 3. FRIS: auth, mdr (the bearer read) and a gateway without response cache.
"$BIN/fris-certs" -dir "$tmp/tls" >/dev/null
tls() { TLS=(-tls-cert "$tmp/tls/$1.pem" -tls-key "$tmp/tls/$1-key.pem" -tls-ca "$tmp/tls/ca.pem"); }
free_port auth_grpc
free_port auth_ops
free_port mdr_grpc
free_port mdr_ops
free_port gw
issuer="http://127.0.0.1:$gw"
tls auth
FRIS_AUTH_KEY_SECRETS=$(head -c 32 /dev/urandom | base64) \
  "$BIN/auth" serve "${TLS[@]}" -data-dir "$tmp/data" -grpc-addr "127.0.0.1:$auth_grpc" -ops-addr "127.0.0.1:$auth_ops" \
  -issuer "$issuer" -log-level warn 2>>"$tmp/auth.log" &
auth_pid=$!
pids+=("$auth_pid")
tls mdr
"$BIN/mdr" serve "${TLS[@]}" -data-dir "$tmp/data" -grpc-addr "127.0.0.1:$mdr_grpc" -ops-addr "127.0.0.1:$mdr_ops" \
  -log-level warn 2>>"$tmp/mdr.log" &
mdr_pid=$!
pids+=("$mdr_pid")
wait_ready "http://127.0.0.1:$mdr_ops/readyz" "$mdr_pid" mdr
wait_ready "http://127.0.0.1:$auth_ops/readyz" "$auth_pid" auth
tls admin
rnd() { head -c 24 /dev/urandom | base64 | tr -d '/+='; }
export FRIS_BENCH_CLIENT_SECRET FRIS_BENCH_USER_PASSWORD
FRIS_BENCH_CLIENT_SECRET=$(rnd)
FRIS_BENCH_USER_PASSWORD=$(rnd)
{
  "$BIN/mdr" import "${TLS[@]}" -addr "127.0.0.1:$mdr_grpc" services/mdr/demo/mdr16.json &&
    "$BIN/auth" create-client "${TLS[@]}" -addr "127.0.0.1:$auth_grpc" -client-id fris-bench -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name fris-bench -type MDR -redirect-url http://localhost:8888/callback &&
    "$BIN/auth" create-client "${TLS[@]}" -addr "127.0.0.1:$auth_grpc" -client-id fris-bench-es256 -secret "$FRIS_BENCH_CLIENT_SECRET" \
      -name "fris-bench ES256" -type MDR -redirect-url http://localhost:8888/callback -alg ES256 &&
    "$BIN/auth" create-user "${TLS[@]}" -addr "127.0.0.1:$auth_grpc" -email bench@fris.example -password "$FRIS_BENCH_USER_PASSWORD" \
      -name "Bench User" -email-verified
} >"$tmp/seed.log" 2>&1 || { echo "hydra-compare: seeding FRIS failed" >&2; cat "$tmp/seed.log" >&2; exit 1; }
tls gateway
"$BIN/gateway" "${TLS[@]}" -max-conns-per-addr 0 -max-inflight-per-addr 0 -max-conns-per-subject 0 -max-inflight-per-subject 0 -addr "127.0.0.1:$gw" -ops-addr "" \
  -mdr-addr "127.0.0.1:$mdr_grpc" -auth-addr "127.0.0.1:$auth_grpc" -jwks-url "http://127.0.0.1:$auth_ops/jwks" \
  -issuer "$issuer" -log-level warn 2>>"$tmp/gateway.log" &
gw_pid=$!
pids+=("$gw_pid")
wait_ready "http://127.0.0.1:$gw/health/groups" "$gw_pid" gateway

# Hydra's store is a separate server: its CPU (the postmaster and its
# backends, living and reaped) is shown beside Hydra's when it runs here.
watch="gateway=$gw_pid,auth=$auth_pid,hydra=$hydra_pid"
pg_dir=$(psql "$HYDRA_PG/postgres" -Atc 'SHOW data_directory' 2>/dev/null || true)
pg_pid=$(head -n 1 "$pg_dir/postmaster.pid" 2>/dev/null || true)
if [[ "$pg_pid" =~ ^[0-9]+$ ]] && [[ -r "/proc/$pg_pid/stat" ]]; then
  watch+=",postgres=+$pg_pid"
else
  echo "hydra-compare: Postgres's postmaster not found here: its CPU is not shown" >&2
fi

# 4. The rounds.
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "hydra-compare: $(nproc) CPUs (${model:-unknown}), $(go env GOVERSION), FRIS $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
mkdir -p "$(dirname "$JSON")"
"$BIN/fris-bench" -suites hydra -gateway "$issuer" \
  -hydra-public "http://127.0.0.1:$hydra_public" -hydra-admin "http://127.0.0.1:$hydra_admin" \
  -watch "$watch" \
  -client-id fris-bench -es256-client-id fris-bench-es256 -user-email bench@fris.example \
  -token-rounds "$ROUNDS" -token-duration "$TOKEN_DURATION" -token-connections "$TOKEN_CONNECTIONS" \
  -duration "$DURATION" -warmup "$WARMUP" -connections "$CONNECTIONS" -json "$JSON"
