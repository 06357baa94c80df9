# Functions of deploy/local/compose-test.sh: HTTP checks against a composed
# gateway and the admin CLIs inside the composed containers. Sourced, not
# run. Expects U (the gateway's URL), dc (the compose command for the
# project) and the demo credentials' defaults of docker-compose.yml.

CLIENT_ID=fris-demo CLIENT_SECRET=fris-demo-client-secret
USER_EMAIL=researcher@fris.example USER_PASSWORD=fris-demo-password
SITE=charite TEILER=teiler1 SITE_USER=charite-teiler1 SITE_PASSWORD=fris-demo-site-1
SITE2=dresden TEILER2=teiler1
PATIENT=services/upload/demo/patient.xml

checks=0
fail() {
  echo "compose-test: FAIL: $*" >&2
  exit 1
}
# expect WHAT WANT GOT
expect() {
  [ "$2" = "$3" ] || fail "$1: want ${2:0:200}, got ${3:0:300}"
  checks=$((checks + 1))
}
# contains WHAT NEEDLE HAYSTACK
contains() {
  case "$3" in *"$2"*) checks=$((checks + 1)) ;; *) fail "$1: no '$2' in: ${3:0:300}" ;; esac
}
# code ARGS...: the HTTP status curl gets
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
# val FIELD: one JSON field of stdin, without jq
val() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }

# admin SVC SUBCOMMAND ARGS...: the service's admin CLI inside its running
# container, with the operator's certificate from the certs volume, to the
# service on the container's own loopback (its certificate names 127.0.0.1;
# no name lookup on the compose network's DNS involved).
admin() {
  local svc=$1 sub=$2 S port out err rc try
  shift 2
  S=$(echo "$svc" | tr a-z A-Z)
  case $svc in auth) port=9101 ;; mdr) port=9102 ;; upload) port=9103 ;; broker) port=9104 ;; esac
  out=$(mktemp)
  err=$(mktemp)
  # A store the service cannot reach for a moment (podman's aardvark-dns
  # has not answered a lookup of redis for 5 s on a loaded machine, and
  # twice running on a fresh one) is "temporarily unavailable": an
  # operator tries again, and so does this, for up to about half a minute.
  for try in 1 2 3 4 5; do
    rc=0
    $dc exec -T -e "FRIS_${S}_TLS_CERT=/tls/admin.pem" -e "FRIS_${S}_TLS_KEY=/tls/admin-key.pem" -e "FRIS_${S}_TLS_CA=/tls/ca.pem" \
      "$svc" "$svc" "$sub" -addr "127.0.0.1:$port" "$@" >"$out" 2>"$err" || rc=$?
    if ((rc == 0)) || ((try == 5)) || ! grep -q "temporarily unavailable" "$err"; then
      break
    fi
    echo "compose-test: admin $svc $sub: $(head -c 200 "$err"); again in 3 s" >&2
    sleep 3
  done
  cat "$out"
  cat "$err" >&2
  rm -f "$out" "$err"
  return "$rc"
}

# wait_up SECONDS: until /health/groups answers 200 (every group up).
wait_up() {
  local i
  for ((i = 0; i < $1; i++)); do
    if [ "$(code "$U/health/groups")" = 200 ]; then
      return 0
    fi
    if ((i % 15 == 14)); then echo "compose-test:   waiting for /health/groups ($((i + 1)) s): $(curl -s "$U/health/groups" | head -c 300)"; fi
    sleep 1
  done
  $dc ps -a >&2 || true
  fail "the deployment did not come up within $1 s"
}

# wait_seeds SECONDS: until every one-shot (certs, the seeds) has exited 0;
# the groups answer before the seeds are done.
wait_seeds() {
  local i line pending failed
  for ((i = 0; i < $1; i++)); do
    pending= failed=
    while IFS='|' read -r svc state exit; do
      case $svc in certs | *-seed | *-seed-*) ;; *) continue ;; esac
      if [ "$state" != exited ]; then
        pending+=" $svc"
      elif [ "$exit" != 0 ]; then
        failed+=" $svc($exit)"
        pending+=" $svc"
      fi
    done < <($dc ps -a --format '{{.Service}}|{{.State}}|{{.ExitCode}}')
    [ -z "$pending" ] && return 0
    if ((i % 15 == 14)); then echo "compose-test:   waiting for the one-shots:$pending"; fi
    sleep 1
  done
  $dc logs --tail 20 $pending >&2 || true
  fail "one-shots not done within $1 s:$pending${failed:+ (failed:$failed)}"
}

# hardened PROJECT: every FRIS service container runs as the image's
# non-root user with a read-only root filesystem, and with the compose
# file's DNS options (a lost query costs 1 s, not 5).
hardened() {
  local svc got
  for svc in mdr auth upload broker gateway; do
    got=$(podman inspect --format '{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}' "$1-$svc-1")
    expect "$svc runs as nonroot on a read-only root" "65532:65532 true" "$got"
    got=$(podman inspect --format '{{.HostConfig.DnsOptions}}' "$1-$svc-1")
    expect "$svc resolves with timeout:1 attempts:5" "[timeout:1 attempts:5]" "$got"
  done
}

# login: flow 1 (the login form, then the code exchange); prints the tokens.
login() {
  local jar csrf loc c
  jar=$(mktemp)
  csrf=$(curl -s -c "$jar" "$U/oauth2/authorize?client_id=$CLIENT_ID&state=xyz" | sed -n 's/.*name="csrf_token" value="\([^"]*\)".*/\1/p')
  loc=$(curl -s -b "$jar" -o /dev/null -w '%{redirect_url}' "$U/oauth2/authorize" \
    -H 'Sec-Fetch-Site: same-origin' --data-urlencode "client_id=$CLIENT_ID" --data-urlencode state=xyz \
    --data-urlencode "csrf_token=$csrf" --data-urlencode "email=$USER_EMAIL" --data-urlencode "password=$USER_PASSWORD")
  rm -f "$jar"
  c=$(echo "$loc" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
  [ -n "$c" ] || fail "login: no code in the redirect '$loc'"
  curl -s -X POST "$U/oauth2/token" -H 'Content-Type: application/json' \
    -d "{\"code\":\"$c\",\"client_id\":\"$CLIENT_ID\",\"client_secret\":\"$CLIENT_SECRET\"}"
}

# keyflow KEYFILE: flow 2 with a registered key: a sign request, the signed
# code, tokens. Prints the token response.
keyflow() {
  local hash sr scode sig
  hash=$(openssl pkey -in "$1" -pubout -outform DER | sha512sum | cut -d' ' -f1)
  sr=$(curl -s -X POST "$U/oauth2/sign_request" -H 'Content-Type: application/json' -d "{\"sha512Hash\":\"$hash\"}")
  scode=$(echo "$sr" | val code)
  [ -n "$scode" ] || fail "sign request: $sr"
  sig=$(printf '%s' "$scode" | openssl dgst -sha512 -sign "$1" | base64 | tr -d '\n')
  curl -s -X POST "$U/oauth2/token" -H 'Content-Type: application/json' -d "{\"code\":\"$scode\",\"signature\":\"$sig\"}"
}

# kids: the key ids of /oauth2/jwks, sorted, one line.
kids() { curl -s "$U/oauth2/jwks" | grep -o '"kid":"[^"]*"' | sort | tr '\n' ' '; }

# explorer_signin: the Explorer's sign-in as a browser does it: the login
# page from /explorer/login, its form with the hidden fields, the redirects
# back to /explorer/. Prints the final page.
explorer_signin() {
  local jar page args=() name value
  jar=$(mktemp)
  page=$(curl -s -L -c "$jar" -b "$jar" "$U/explorer/login?return=%2Fexplorer%2F")
  while read -r name value; do
    [ -n "$name" ] && args+=(--data-urlencode "$name=$value")
  done < <(echo "$page" | grep -o '<input type="hidden" name="[^"]*" value="[^"]*">' |
    sed 's/.*name="\([^"]*\)" value="\([^"]*\)".*/\1 \2/' | sed 's/&amp;/\&/g; s/&#43;/+/g; s/&#34;/"/g; s/&#39;/'"'"'/g')
  ((${#args[@]})) || fail "Explorer sign-in: no login form at /explorer/login: ${page:0:300}"
  curl -s -L -c "$jar" -b "$jar" -H 'Sec-Fetch-Site: same-origin' "$U/oauth2/authorize" "${args[@]}" \
    --data-urlencode "email=$USER_EMAIL" --data-urlencode "password=$USER_PASSWORD" -w '\nfinal-url: %{url_effective}'
  rm -f "$jar"
}

# settle_uploads SECONDS: until an upload (the demo patient as CT-SETTLE)
# is answered 201 or 200. The previous release's services
# look up a peer's DNS TXT record before its first call, which podman's
# aardvark-dns can leave unanswered for longer than a request may take;
# this release does not (pkg/rpcclient), and is checked without it.
settle_uploads() {
  local end=$((SECONDS + $1)) got doc C=$U/dktk/sites/${SITE}_teiler/$TEILER
  doc=$(mktemp)
  sed 's/id="DEMO-0001"/id="CT-SETTLE"/' "$PATIENT" >"$doc"
  while ((SECONDS < end)); do
    got=$(code -m 30 -u "$SITE_USER:$SITE_PASSWORD" -H 'Content-Type: application/xml' -X PUT --data-binary @"$doc" "$C/pats/CT-SETTLE")
    case $got in 200 | 201) rm -f "$doc" && return 0 ;; esac
    echo "compose-test:   the first upload answered $got; again in 5 s"
    sleep 5
  done
  fail "no upload answered 201 within $1 s"
}

# write_data DIR: the data a deployment holds, written through the gateway
# and the admin CLIs; what verify_data checks later is kept in DIR.
write_data() {
  local d=$1 tokens bank tok id author
  mkdir -p "$d"
  # A: a user's tokens (the access token must still verify after a restart,
  # an upgrade, a restore), a client's token, a registered key.
  tokens=$(login)
  echo "$tokens" | val access_token >"$d/access"
  [ -s "$d/access" ] || fail "login: $tokens"
  expect "client_credentials" 200 "$(code -X POST "$U/oauth2/token" -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials)"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/key.pem" 2>/dev/null
  local pub email
  pub=$(openssl pkey -in "$d/key.pem" -pubout -outform DER | base64 | tr -d '\n')
  email="registry-$RANDOM@fris.example"
  expect "register a key" 200 "$(code -X POST "$U/oauth2/register" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$email\",\"name\":\"Compose test registry\",\"description\":\"key\",\"base64EncodedPublicKey\":\"$pub\"}")"
  contains "flow 2 with the new key" access_token "$(keyflow "$d/key.pem")"
  kids >"$d/kids"
  # C: a new patient, byte for byte as uploaded.
  local C=$U/dktk/sites/${SITE}_teiler/$TEILER pid="CT-$RANDOM$RANDOM"
  sed "s/id=\"DEMO-0001\"/id=\"$pid\"/" "$PATIENT" >"$d/patient.xml"
  echo "$pid" >"$d/patient-id"
  expect "upload a patient" 201 "$(code -u "$SITE_USER:$SITE_PASSWORD" -H 'Content-Type: application/xml' -X PUT --data-binary @"$d/patient.xml" "$C/pats/$pid")"
  admin upload patient -site "$SITE" -teiler "$TEILER" "$pid" | sha256sum >"$d/patient.sha"
  expect "the stored patient is the uploaded document" "$(sha256sum <"$d/patient.xml")" "$(cat "$d/patient.sha")"
  # D: a bank (activation code from the broker's log), approved, an inquiry, a reply.
  bank="bank-$RANDOM@charite.example"
  expect "bank registration asks for a code" 401 "$(code -X PUT "$U/broker/rest/searchbroker/banks/$bank")"
  local acode="" i
  for i in $(seq 1 20); do
    acode=$($dc logs broker 2>&1 | grep 'activation code' | grep "$bank" | tail -n 1 | sed 's/.*"code":"\([0-9]*\)".*/\1/')
    [ -n "$acode" ] && break
    sleep 0.5
  done
  [ -n "$acode" ] || fail "no activation code for $bank in the broker's log"
  tok=$(curl -s -X PUT -H "Authorization: SamplyRegistration $acode" "$U/broker/rest/searchbroker/banks/$bank")
  [ ${#tok} -ge 32 ] || fail "bank token: $tok"
  admin broker approve-bank -site "$SITE" "$bank" >/dev/null
  author=$(admin auth users | awk -v e="$USER_EMAIL" '$2 == e {print $1}')
  [ -n "$author" ] || fail "no user id for $USER_EMAIL"
  id=$(admin broker seed-demo -author "$author" | tr -dc '0-9')
  [ -n "$id" ] || fail "seed-demo printed no inquiry id"
  expect "the bank replies" 200 "$(code -X PUT -H "Authorization: Samply $tok" -H 'Content-Type: text/plain' --data 42 \
    "$U/broker/rest/searchbroker/inquiries/$id/replies/$bank")"
  echo "$bank" >"$d/bank"
  echo "$tok" >"$d/bank-token"
  echo "$id" >"$d/inquiry"
}

# verify_data DIR: everything write_data wrote is there and works.
verify_data() {
  local d=$1 tokens SB=$U/broker/rest/searchbroker bank tok id
  bank=$(cat "$d/bank") tok=$(cat "$d/bank-token") id=$(cat "$d/inquiry")
  expect "an access token issued before verifies" 200 "$(code "$U/oauth2/userinfo" -H "Authorization: Bearer $(cat "$d/access")")"
  tokens=$(login)
  contains "the user signs in" access_token "$tokens"
  expect "the client's secret works" 200 "$(code -X POST "$U/oauth2/token" -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials)"
  contains "the registered key signs in" access_token "$(keyflow "$d/key.pem")"
  local before after k
  before=$(cat "$d/kids") after=$(kids)
  for k in $before; do contains "signing key $k is still published" "$k" "$after"; done
  expect "the patient is byte-identical" "$(cat "$d/patient.sha")" "$(admin upload patient -site "$SITE" -teiler "$TEILER" "$(cat "$d/patient-id")" | sha256sum)"
  expect "the bank's token works" 200 "$(code -H "Authorization: Samply $tok" "$SB/banks/$bank/status")"
  contains "the bank still sees the inquiry" "$id" "$(curl -s -H "Authorization: Samply $tok" "$SB/inquiries")"
  contains "the researcher reads the reply" 42 "$(curl -s -H "Authorization: Bearer $(echo "$tokens" | val access_token)" "$SB/researcher/inquiries/$id/replies")"
}

# walkthrough: the README's group A-D walkthroughs and an Explorer sign-in,
# with their answers checked.
walkthrough() {
  local M=$U/v3/api/mdr etag tokens access refresh
  # B: the registry.
  contains "namespaces" mdr16 "$(curl -s "$M/namespaces")"
  contains "a group's members" "urn:mdr16:dataelement:21:1" "$(curl -s "$M/dataelementgroups/urn:mdr16:dataelementgroup:5:1/members")"
  contains "German labels first" '"language":"de"' "$(curl -s -H 'Accept-Language: de' "$M/dataelements/urn:mdr16:dataelement:23:1")"
  expect "search" 200 "$(code "$M/namespaces/mdr16/search?query=spender")"
  etag=$(curl -sI "$M/dataelements/urn:mdr16:dataelement:23:1" | awk 'tolower($1)=="etag:"{print $2}' | tr -d '\r')
  expect "conditional GET" 304 "$(code -H "If-None-Match: $etag" "$M/dataelements/urn:mdr16:dataelement:23:1")"
  expect "unknown URN" 404 "$(code "$M/dataelements/urn:mdr16:dataelement:999:1")"
  expect "malformed URN" 400 "$(code "$M/dataelements/not-a-urn")"
  # A: sign-in, tokeninfo, userinfo, refresh and its reuse, discovery.
  tokens=$(login)
  access=$(echo "$tokens" | val access_token) refresh=$(echo "$tokens" | val refresh_token)
  contains "tokeninfo" "\"issuer\":\"$U\"" "$(curl -s "$U/oauth2/tokeninfo" -H "Authorization: Bearer $access")"
  contains "userinfo" "$USER_EMAIL" "$(curl -s "$U/oauth2/userinfo" -H "Authorization: Bearer $access")"
  contains "refresh" access_token "$(curl -s -X POST "$U/oauth2/token" -H 'Content-Type: application/json' -d "{\"refresh_token\":\"$refresh\"}")"
  expect "a spent refresh token" 403 "$(code -X POST "$U/oauth2/token" -H 'Content-Type: application/json' -d "{\"refresh_token\":\"$refresh\"}")"
  # Its reuse revoked the chain, the access token included (the gateway
  # learns within about a second): sign in again for what follows.
  local i revoked=
  for i in $(seq 1 20); do
    [ "$(code "$U/oauth2/userinfo" -H "Authorization: Bearer $access")" = 403 ] && { revoked=1; break; }
    sleep 0.5
  done
  expect "the chain's access token is revoked" 1 "$revoked"
  tokens=$(login)
  access=$(echo "$tokens" | val access_token)
  contains "discovery" "\"issuer\":\"$U\"" "$(curl -s "$U/.well-known/openid-configuration")"
  # C: upload stats, replace, refusals, delete.
  local C=$U/dktk/sites/${SITE}_teiler/$TEILER AUTH=(-u "$SITE_USER:$SITE_PASSWORD") XML=(-H 'Content-Type: application/xml')
  contains "uploadStats" LastUploadTimestamp "$(curl -s "${AUTH[@]}" "$C/uploadStats")"
  expect "a new patient" 201 "$(code "${AUTH[@]}" "${XML[@]}" -X PUT --data-binary @"$PATIENT" "$C/pats/DEMO-0001")"
  expect "a second upload replaces" 200 "$(code "${AUTH[@]}" "${XML[@]}" -X POST --data-binary @"$PATIENT" "$U/dktk/sites/$SITE/teiler/$TEILER/pats/DEMO-0001")"
  expect "a document without the namespace" 400 "$(code "${AUTH[@]}" "${XML[@]}" -X PUT --data '<Patient id="x"/>' "$C/pats/x")"
  expect "a wrong password" 401 "$(code -u "$SITE_USER:wrong" "$C/uploadStats")"
  expect "the other site's path" 403 "$(code "${AUTH[@]}" "$U/dktk/sites/${SITE2}_teiler/$TEILER2/uploadStats")"
  local other
  other=$(mktemp)
  sed 's/id="DEMO-0001"/id="DEMO-0002"/' "$PATIENT" >"$other"
  expect "another patient" 201 "$(code "${AUTH[@]}" "${XML[@]}" -X PUT --data-binary @"$other" "$C/pats/DEMO-0002")"
  rm -f "$other"
  expect "delete it" 204 "$(code "${AUTH[@]}" -X DELETE "$C/pats/DEMO-0002")"
  expect "deleted" 404 "$(code "${AUTH[@]}" -X DELETE "$C/pats/DEMO-0002")"
  # D: the reachability check, the name, the researcher API's refusal.
  expect "broker reachable" 200 "$(code "$U/broker/")"
  expect "broker name" 200 "$(code "$U/broker/rest/searchbroker/name")"
  expect "researcher API without a token" 401 "$(code "$U/broker/rest/searchbroker/researcher/inquiries")"
  contains "the researcher's inquiries" '"id"' "$(curl -s -H "Authorization: Bearer $access" "$U/broker/rest/searchbroker/researcher/inquiries")"
  # The Explorer.
  local page
  page=$(explorer_signin)
  contains "Explorer sign-in ends at the Explorer" "final-url: $U/explorer/" "$page"
  contains "Explorer shows the signed-in user" "Demo Researcher" "$page"
}
