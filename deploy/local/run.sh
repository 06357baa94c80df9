#!/usr/bin/env bash
# `make run`: start every service and the gateway on the embedded store, seed
# the demo data, write .fris/demo.env, and stop everything cleanly on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."

BIN=${BIN:-bin}
DATA=${FRIS_DATA_DIR:-.fris/data}
ADDR=${FRIS_GATEWAY_ADDR:-127.0.0.1:8080}
LOGS=.fris/logs
mkdir -p "$DATA" "$LOGS"

pids=()
stop() {
  trap - INT TERM EXIT
  if ((${#pids[@]})); then
    echo
    echo "stopping..."
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
  echo "stopped"
}
# Ctrl-C is the normal way to stop: exit 0 then; other exits keep their status.
trap 'stop; exit 0' INT TERM
trap stop EXIT

# wait_ready URL NAME: poll until the URL answers 200 (30 s at most).
wait_ready() {
  for _ in $(seq 1 300); do
    if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$2 did not become ready; see $LOGS/$2.log" >&2
  exit 1
}

start() { # start NAME ARGS...
  local name=$1
  shift
  "$BIN/$name" "$@" 2>>"$LOGS/$name.log" &
  pids+=($!)
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
# The secret auth encrypts its private signing keys under, made once like
# the demo credentials: losing it loses the keys (auth then refuses to
# start), so it stays with the data it opens. Keys from before encryption
# at rest are encrypted under it at auth's first start.
key_secret="$DATA/auth-key-secret"
if [[ ! -s "$key_secret" ]]; then
  (umask 077 && head -c 32 /dev/urandom | base64 >"$key_secret")
fi
# shellcheck disable=SC1090
source "$secrets"
FRIS_CLIENT_ID=fris-demo
FRIS_CLIENT_REDIRECT=http://localhost:8888/callback
FRIS_USER_EMAIL=researcher@fris.example
FRIS_SITE_ID=charite FRIS_TEILER_ID=teiler1 FRIS_SITE_USER=charite-teiler1
FRIS_SITE2_ID=dresden FRIS_TEILER2_ID=teiler1 FRIS_SITE2_USER=dresden-teiler1

start auth serve -data-dir "$DATA" -grpc-addr 127.0.0.1:9101 -ops-addr 127.0.0.1:9201 -issuer "http://$ADDR" \
  -key-secret-file "$key_secret"
start mdr serve -data-dir "$DATA" -grpc-addr 127.0.0.1:9102 -ops-addr 127.0.0.1:9202
start upload serve -data-dir "$DATA" -grpc-addr 127.0.0.1:9103 -ops-addr 127.0.0.1:9203 \
  -mdr-addr 127.0.0.1:9102 -validation warn
start broker serve -data-dir "$DATA" -grpc-addr 127.0.0.1:9104 -ops-addr 127.0.0.1:9204 \
  -registration activation-code -public-url "http://$ADDR/broker/rest/searchbroker"
wait_ready http://127.0.0.1:9201/readyz auth
wait_ready http://127.0.0.1:9202/readyz mdr
"$BIN/mdr" import -addr 127.0.0.1:9102 services/mdr/demo/mdr16.json
"$BIN/auth" create-client -addr 127.0.0.1:9101 -if-missing -client-id "$FRIS_CLIENT_ID" -secret "$FRIS_CLIENT_SECRET" \
  -name "FRIS demo client" -type MDR -redirect-url "$FRIS_CLIENT_REDIRECT" >/dev/null
"$BIN/auth" create-user -addr 127.0.0.1:9101 -if-missing -email "$FRIS_USER_EMAIL" -password "$FRIS_USER_PASSWORD" \
  -name "Demo Researcher" -email-verified >/dev/null
wait_ready http://127.0.0.1:9203/readyz upload
"$BIN/upload" create-credential -addr 127.0.0.1:9103 -if-missing -site "$FRIS_SITE_ID" -teiler "$FRIS_TEILER_ID" \
  -password "$FRIS_SITE_PASSWORD" "$FRIS_SITE_USER" >/dev/null
"$BIN/upload" create-credential -addr 127.0.0.1:9103 -if-missing -site "$FRIS_SITE2_ID" -teiler "$FRIS_TEILER2_ID" \
  -password "$FRIS_SITE2_PASSWORD" "$FRIS_SITE2_USER" >/dev/null
# The demo inquiry belongs to the demo researcher: its author is the user id
# that is the subject of the researcher's access tokens.
wait_ready http://127.0.0.1:9204/readyz broker
FRIS_USER_ID=$("$BIN/auth" users -addr 127.0.0.1:9101 | awk -v e="$FRIS_USER_EMAIL" '$2 == e { print $1 }')
FRIS_INQUIRY_ID=$("$BIN/broker" seed-demo -addr 127.0.0.1:9104 -author "$FRIS_USER_ID" -sites charite,dresden)

start gateway -addr "$ADDR" -mdr-addr 127.0.0.1:9102 -auth-addr 127.0.0.1:9101 -broker-addr 127.0.0.1:9104 \
  -upload-addr 127.0.0.1:9103 -jwks-url http://127.0.0.1:9201/jwks -issuer "http://$ADDR"
wait_ready "http://$ADDR/readyz" gateway

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
ENV

cat <<MSG

FRIS is running at http://$ADDR   (logs: $LOGS/, data: $DATA/, demo credentials: .fris/demo.env)

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
wait
