#!/usr/bin/env bash
# `make run`: start every service and the gateway on the embedded store, seed
# the demo data, write .fris/demo.env, and stop everything cleanly on Ctrl-C.
# It refuses to start over another run's ports or data, and stops everything
# when one service stops on its own.
set -euo pipefail
# Started from a script (a background job of a shell without job control,
# as `make run &` in a script is), the run inherits SIGINT ignored, and bash
# cannot trap a signal ignored at its start: SIGINT to the process group
# would stop the services (Go turns it back on) but not this script, which
# would then report them as failed. Start again with SIGINT at its default,
# where env(1) can (coreutils 8.31 and later); SIGTERM is trapped either way.
if [[ -z "${FRIS_RUN_SIGINT_RESET:-}" ]] && env --default-signal=INT true 2>/dev/null; then
  FRIS_RUN_SIGINT_RESET=1 exec env --default-signal=INT "$0" "$@"
fi
unset FRIS_RUN_SIGINT_RESET
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin}
DATA=${FRIS_DATA_DIR:-.fris/data}
ADDR=${FRIS_GATEWAY_ADDR:-127.0.0.1:8080}
LOGS=.fris/logs
# The development CA and every component's certificate (mutual TLS on the
# services' gRPC ports, docs/security.md), made once by fris-certs. The CLIs
# find the operator's certificate there by default: run them from here.
TLS=${FRIS_TLS_DIR:-.fris/tls}
# The services' ports: gRPC at BASE+1..4, ops (readyz, metrics, jwks) at
# BASE+101..104, in the order auth, mdr, upload, broker; the gateway's ops
# port (its /metrics, never on the public port) at BASE+100.
BASE=${FRIS_PORT_BASE:-9100}
if ! [[ "$BASE" =~ ^[0-9]+$ ]] || ((BASE < 1024 || BASE > 65000)); then
  echo "run: FRIS_PORT_BASE=$BASE: want a number from 1024 to 65000" >&2
  exit 2
fi
AUTH=127.0.0.1:$((BASE + 1)) MDR=127.0.0.1:$((BASE + 2))
UPLOAD=127.0.0.1:$((BASE + 3)) BROKER=127.0.0.1:$((BASE + 4))
AUTH_OPS=127.0.0.1:$((BASE + 101)) MDR_OPS=127.0.0.1:$((BASE + 102))
UPLOAD_OPS=127.0.0.1:$((BASE + 103)) BROKER_OPS=127.0.0.1:$((BASE + 104))
GATEWAY_OPS=127.0.0.1:$((BASE + 100))

# Check everything before starting anything: a service that cannot bind, with
# another run's service answering on its port, would look ready.
in_use() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
# holder PORT: " (name, pid N)" when ss can tell who listens there.
holder() {
  command -v ss >/dev/null 2>&1 || return 0
  ss -Hltnp "sport = :$1" 2>/dev/null |
    sed -n 's/.*users:(("\([^"]*\)",pid=\([0-9]*\).*/ (\1, pid \2)/p' | head -n 1
}
refuse=0
for a in "$ADDR" "$AUTH" "$MDR" "$UPLOAD" "$BROKER" "$AUTH_OPS" "$MDR_OPS" "$UPLOAD_OPS" "$BROKER_OPS" "$GATEWAY_OPS"; do
  if in_use "$a"; then
    if [[ "$a" == "$ADDR" ]]; then hint="FRIS_GATEWAY_ADDR=127.0.0.1:<port>"; else hint="FRIS_PORT_BASE (now $BASE)"; fi
    echo "run: $a is in use$(holder "${a##*:}"): is another \`make run\` going? stop it, or set $hint" >&2
    refuse=1
  fi
done
# bbolt holds an exclusive flock on its file while open; without flock(1),
# the service's own open fails after a few seconds and the watcher says so.
if command -v flock >/dev/null 2>&1; then
  for f in "$DATA"/*.db; do
    [[ -e "$f" ]] || continue
    if ! flock -n "$f" true 2>/dev/null; then
      who=$(fuser "$f" 2>/dev/null | tr -s ' ' | sed 's/^ *//') || true
      echo "run: $f is locked by another process${who:+ (pid $who)}: is another \`make run\` using $DATA? stop it, or set FRIS_DATA_DIR" >&2
      refuse=1
    fi
  done
fi
if ((refuse)); then
  echo "run: not starting" >&2
  exit 1
fi
# Everything written from here on is the user's alone: demo credentials,
# secrets, data and logs (which name accounts). Files an older run made
# readable by others are narrowed below.
umask 077
mkdir -p "$DATA" "$LOGS"
"$BIN/fris-certs" -dir "$TLS" >/dev/null

pids=() names=()
# shutting_down: set once the run stops everything; services that exit
# from then on are expected to.
shutting_down=0
# clean: the service stopped() found exited with 0 or by SIGINT or SIGTERM
# (130, 143): it was stopped from outside (a signal to the process group
# reaches every service too), not a failure.
clean=0
# stopped: true when a service has exited; reports the first one (with the
# end of its log when it failed) unless the run is shutting down; false
# when every one is still running.
stopped() {
  local i rc
  for i in "${!pids[@]}"; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      rc=0
      wait "${pids[$i]}" 2>/dev/null || rc=$?
      case $rc in 0 | 130 | 143) clean=1 ;; *) clean=0 ;; esac
      if ((shutting_down)); then
        :
      elif ((clean)); then
        echo "${names[$i]} was stopped (exit $rc): stopping the rest" >&2
      else
        echo "${names[$i]} stopped (exit $rc); see $LOGS/${names[$i]}.log" >&2
        tail -n 5 "$LOGS/${names[$i]}.log" 2>/dev/null | sed 's/^/    /' >&2
      fi
      unset 'pids[i]' 'names[i]' # reported once
      return 0
    fi
  done
  return 1
}
stop() { # stop [quiet]: quiet on Ctrl-C, when nothing went wrong
  local rc=$?
  # A second signal must not end this script before its services: make
  # passes SIGTERM on to it once more, and Ctrl-C may come twice. The
  # services' own shutdown timeout bounds the wait.
  trap '' INT TERM
  trap - EXIT
  if [[ -n "${sleeper:-}" ]]; then kill "$sleeper" 2>/dev/null || true; fi
  if ((${#pids[@]})); then
    if [[ "${1:-}" != quiet ]] && ((rc != 0)); then stopped || true; fi
    shutting_down=1
    echo
    echo "stopping..."
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  echo "stopped"
}
# Ctrl-C is the normal way to stop: exit 0 then; other exits keep their status.
trap 'stop quiet; exit 0' INT TERM
trap stop EXIT

# wait_ready URL NAME: poll until the URL answers 200 (30 s at most); a
# service that stops meanwhile ends the run at once.
wait_ready() {
  for _ in $(seq 1 300); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    if stopped; then
      if ((clean)); then exit 0; fi
      exit 1
    fi
    sleep 0.1
  done
  echo "$2 did not become ready; see $LOGS/$2.log" >&2
  exit 1
}

start() { # start NAME ARGS...: the gateway, or a service's `serve`, with its certificate
  local name=$1
  shift
  local tls=(-tls-cert "$TLS/$name.pem" -tls-key "$TLS/$name-key.pem" -tls-ca "$TLS/ca.pem")
  if [[ "$name" == gateway ]]; then
    "$BIN/$name" "${tls[@]}" "$@" 2>>"$LOGS/$name.log" &
  else
    "$BIN/$name" "$1" "${tls[@]}" "${@:2}" 2>>"$LOGS/$name.log" &
  fi
  pids+=($!)
  names+=("$name")
}
admin() { # admin BIN SUBCOMMAND ARGS...: an operator's command, with the admin certificate
  local bin=$1 sub=$2
  shift 2
  "$BIN/$bin" "$sub" -tls-cert "$TLS/admin.pem" -tls-key "$TLS/admin-key.pem" -tls-ca "$TLS/ca.pem" "$@"
}

# Demo credentials are made once and kept with the data, so a second
# `make run` finds the same client and user it seeded the first time.
secrets="$DATA/demo-secrets.env"
if [[ ! -s "$secrets" ]]; then
  rnd() { head -c 24 /dev/urandom | base64 | tr -d '/+=' ; }
  {
    echo "FRIS_CLIENT_SECRET=$(rnd)"
    echo "FRIS_USER_PASSWORD=$(rnd)"
  } >"$secrets"
fi
# Site passwords joined the demo later: add them to an older secrets file.
if ! grep -q '^FRIS_SITE_PASSWORD=' "$secrets"; then
  rnd() { head -c 24 /dev/urandom | base64 | tr -d '/+=' ; }
  {
    echo "FRIS_SITE_PASSWORD=$(rnd)"
    echo "FRIS_SITE2_PASSWORD=$(rnd)"
  } >>"$secrets"
fi
# The FRIS Explorer joined later too: its client's secret, in a file of its
# own that the gateway reads (-explorer-client-secret-file).
if ! grep -q '^FRIS_EXPLORER_SECRET=' "$secrets"; then
  rnd() { head -c 24 /dev/urandom | base64 | tr -d '/+=' ; }
  echo "FRIS_EXPLORER_SECRET=$(rnd)" >>"$secrets"
fi
# The secret auth encrypts its private signing keys under, made once like
# the demo credentials: losing it loses the keys (auth then refuses to
# start), so it stays with the data it opens. Keys from before encryption
# at rest are encrypted under it at auth's first start.
key_secret="$DATA/auth-key-secret"
if [[ ! -s "$key_secret" ]]; then
  head -c 32 /dev/urandom | base64 >"$key_secret"
fi
# shellcheck disable=SC1090
source "$secrets"
FRIS_CLIENT_ID=fris-demo
FRIS_CLIENT_REDIRECT=http://localhost:8888/callback
FRIS_USER_EMAIL=researcher@fris.example
FRIS_SITE_ID=charite FRIS_TEILER_ID=teiler1 FRIS_SITE_USER=charite-teiler1
FRIS_SITE2_ID=dresden FRIS_TEILER2_ID=teiler1 FRIS_SITE2_USER=dresden-teiler1
# The Explorer's redirect URI is on the gateway's own origin; a browser on
# this machine may call it 127.0.0.1 or localhost, so both are registered.
FRIS_EXPLORER_ID=fris-explorer
FRIS_EXPLORER_REDIRECT="http://$ADDR/explorer/callback"
if [[ "${ADDR%:*}" == 127.0.0.1 ]]; then
  FRIS_EXPLORER_REDIRECT+=",http://localhost:${ADDR##*:}/explorer/callback"
fi
explorer_secret="$DATA/explorer-client-secret"
printf '%s\n' "$FRIS_EXPLORER_SECRET" >"$explorer_secret"
# The umask only covers new files: older runs wrote some of these 0644.
chmod 600 "$secrets" "$key_secret" "$explorer_secret"
[[ ! -e .fris/demo.env ]] || chmod 600 .fris/demo.env

start auth serve -data-dir "$DATA" -grpc-addr "$AUTH" -ops-addr "$AUTH_OPS" -issuer "http://$ADDR" \
  -key-secret-file "$key_secret"
start mdr serve -data-dir "$DATA" -grpc-addr "$MDR" -ops-addr "$MDR_OPS"
start upload serve -data-dir "$DATA" -grpc-addr "$UPLOAD" -ops-addr "$UPLOAD_OPS" \
  -mdr-addr "$MDR" -validation warn -broker-addr "$BROKER"
start broker serve -data-dir "$DATA" -grpc-addr "$BROKER" -ops-addr "$BROKER_OPS" \
  -registration activation-code -public-url "http://$ADDR/broker/rest/searchbroker"
wait_ready http://$AUTH_OPS/readyz auth
wait_ready http://$MDR_OPS/readyz mdr
# The demo registry goes only into an empty one: an operator's registry in
# $DATA is theirs, and a re-import would overwrite their edits to mdr16.
admin mdr import -addr "$MDR" -if-empty services/mdr/demo/mdr16.json
admin auth create-client -addr "$AUTH" -if-missing -client-id "$FRIS_CLIENT_ID" -secret "$FRIS_CLIENT_SECRET" \
  -name "FRIS demo client" -type MDR -redirect-url "$FRIS_CLIENT_REDIRECT" >/dev/null
admin auth create-client -addr "$AUTH" -if-missing -client-id "$FRIS_EXPLORER_ID" -secret "$FRIS_EXPLORER_SECRET" \
  -name "FRIS Explorer" -redirect-url "$FRIS_EXPLORER_REDIRECT" >/dev/null
admin auth create-user -addr "$AUTH" -if-missing -email "$FRIS_USER_EMAIL" -password "$FRIS_USER_PASSWORD" \
  -name "Demo Researcher" -email-verified >/dev/null
# Both roles (docs/security.md, Roles), also on a data directory made before
# roles existed: set-scopes is idempotent.
admin auth set-scopes -addr "$AUTH" -scopes broker:researcher,users:search,fris:operator "$FRIS_USER_EMAIL"
# The site registry (the broker's) before what names its sites: upload's
# credentials, the broker's banks and the demo inquiry.
wait_ready http://$BROKER_OPS/readyz broker
admin broker create-site -addr "$BROKER" -if-missing -id "$FRIS_SITE_ID" \
  -name-de "Charité – Universitätsmedizin Berlin" -name-en "Charité – Universitätsmedizin Berlin" >/dev/null
admin broker create-site -addr "$BROKER" -if-missing -id "$FRIS_SITE2_ID" \
  -name-de "Universitätsklinikum Dresden" -name-en "University Hospital Dresden" >/dev/null
wait_ready http://$UPLOAD_OPS/readyz upload
admin upload create-credential -addr "$UPLOAD" -if-missing -site "$FRIS_SITE_ID" -teiler "$FRIS_TEILER_ID" \
  -password "$FRIS_SITE_PASSWORD" "$FRIS_SITE_USER" >/dev/null
admin upload create-credential -addr "$UPLOAD" -if-missing -site "$FRIS_SITE2_ID" -teiler "$FRIS_TEILER2_ID" \
  -password "$FRIS_SITE2_PASSWORD" "$FRIS_SITE2_USER" >/dev/null
# The demo inquiry belongs to the demo researcher: its author is the user id
# that is the subject of the researcher's access tokens.
FRIS_USER_ID=$(admin auth users -addr "$AUTH" | awk -v e="$FRIS_USER_EMAIL" '$2 == e { print $1 }')
FRIS_INQUIRY_ID=$(admin broker seed-demo -addr "$BROKER" -author "$FRIS_USER_ID" -sites charite,dresden)

start gateway -addr "$ADDR" -ops-addr "$GATEWAY_OPS" -mdr-addr "$MDR" -auth-addr "$AUTH" -broker-addr "$BROKER" \
  -upload-addr "$UPLOAD" -jwks-url http://$AUTH_OPS/jwks -issuer "http://$ADDR" \
  -explorer-client-id "$FRIS_EXPLORER_ID" -explorer-client-secret-file "$explorer_secret"
wait_ready "http://$ADDR/readyz" gateway
# /readyz is the gateway alone; /health/groups answers 200 once every group
# behind it can serve (and auth's signing keys are loaded).
wait_ready "http://$ADDR/health/groups" gateway

cat > .fris/demo.env <<ENV
FRIS_GATEWAY_URL=http://$ADDR
FRIS_CLIENT_ID=$FRIS_CLIENT_ID
FRIS_CLIENT_SECRET=$FRIS_CLIENT_SECRET
FRIS_CLIENT_REDIRECT=$FRIS_CLIENT_REDIRECT
FRIS_USER_EMAIL=$FRIS_USER_EMAIL
FRIS_USER_PASSWORD=$FRIS_USER_PASSWORD
FRIS_SITE_ID=$FRIS_SITE_ID
FRIS_TEILER_ID=$FRIS_TEILER_ID
FRIS_SITE_USER=$FRIS_SITE_USER
FRIS_SITE_PASSWORD=$FRIS_SITE_PASSWORD
FRIS_SITE2_ID=$FRIS_SITE2_ID
FRIS_TEILER2_ID=$FRIS_TEILER2_ID
FRIS_SITE2_USER=$FRIS_SITE2_USER
FRIS_SITE2_PASSWORD=$FRIS_SITE2_PASSWORD
FRIS_INQUIRY_ID=$FRIS_INQUIRY_ID
# The admin CLIs find this run's certificates and services from any directory.
export FRIS_TLS_DIR="$(cd "$TLS" && pwd)"
export FRIS_AUTH_ADDR=$AUTH FRIS_MDR_ADDR=$MDR FRIS_UPLOAD_ADDR=$UPLOAD FRIS_BROKER_ADDR=$BROKER
ENV

cat <<MSG

FRIS is running at http://$ADDR   (logs: $LOGS/, data: $DATA/, demo credentials: .fris/demo.env)
  services' gRPC ports take mutual TLS only; certificates in $TLS/ (the CLIs use $TLS/admin.pem, e.g. bin/auth users)

  explorer     http://$ADDR/explorer/   (sign in as the demo user)
  demo client  $FRIS_CLIENT_ID / $FRIS_CLIENT_SECRET   (redirect: $FRIS_CLIENT_REDIRECT)
  demo user    $FRIS_USER_EMAIL / $FRIS_USER_PASSWORD
  login page   http://$ADDR/oauth2/authorize?client_id=$FRIS_CLIENT_ID&state=xyz
  site 1       $FRIS_SITE_ID/$FRIS_TEILER_ID: $FRIS_SITE_USER / $FRIS_SITE_PASSWORD   (Basic, uploads to /dktk/sites/${FRIS_SITE_ID}_teiler/$FRIS_TEILER_ID/...)
  site 2       $FRIS_SITE2_ID/$FRIS_TEILER2_ID: $FRIS_SITE2_USER / $FRIS_SITE2_PASSWORD
  inquiry      $FRIS_INQUIRY_ID (released to the sites charite and dresden; banks poll http://$ADDR/broker/rest/searchbroker/inquiries)
  bank codes   banks register with an activation code; without SMTP the broker writes each code to $LOGS/broker.log:
               grep '"activation code' $LOGS/broker.log | tail -n 1

  curl -s http://$ADDR/v3/api/mdr/namespaces
  curl -s http://$ADDR/v3/api/mdr/namespaces/mdr16/members
  curl -s -H 'Accept-Language: de' http://$ADDR/v3/api/mdr/dataelements/urn:mdr16:dataelement:23:1
  curl -s -u $FRIS_SITE_USER:$FRIS_SITE_PASSWORD -X PUT -H 'Content-Type: application/xml' \
    --data-binary @services/upload/demo/patient.xml http://$ADDR/dktk/sites/${FRIS_SITE_ID}_teiler/$FRIS_TEILER_ID/pats/DEMO-0001 -w '%{http_code}\n'

Press Ctrl-C to stop.
MSG
# Half a FRIS answers wrongly rather than not at all: when one service stops,
# say which and why, and stop the rest. (sleep in the background, so that
# Ctrl-C's trap runs at once.)
while ! stopped; do
  sleep 1 &
  sleeper=$!
  wait $sleeper || true
done
if ((clean)); then exit 0; fi
exit 1
