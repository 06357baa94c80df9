#!/usr/bin/env bash
# make compose-test: the platform team's path, run for real with podman.
#
#  1. base images: local stand-ins (deploy/local/standins/build.sh), built
#     once and cached, since this machine reaches no image registry
#  2. the previous release's five images (the commit in
#     deploy/local/previous-release, cached by its id) and today's five
#  3. upgrade: the previous release's docker-compose.yml and images come up;
#     data is written through the gateway (a user's tokens, a client, a
#     registered key, a patient, a bank with its token, an inquiry and a
#     reply); `compose down` (volumes kept); today's compose file and images
#     on the same volumes: everything is there, no manual step
#  4. the README's group A-D walkthroughs and an Explorer sign-in, checked
#  5. restart: `compose down` and `up` again: everything is there, tokens
#     issued before still verify
#  6. the key secret rotated (the new one first and the old one after it for
#     one start, then the new one alone), then the CA (the certs volume's
#     files removed, `up --force-recreate`): everything works after each
#  7. backup and restore, as deploy/README.md describes it: an online Redis
#     backup (redis-cli --rdb) and the certs volume, `down -v` (wiped), the
#     volumes restored, `up`: the patient byte-identical, sign-ins and the
#     bank's token work
#  8. `compose down -v`: nothing of the project left
#
# The compose tool is Docker Compose v2 (built from its Go module once,
# cached), talking to podman's Docker-compatible API on a private socket:
# the tool platform teams use with Docker, on the engine this machine has.
# FRIS_COMPOSE_KEEP=1 leaves a failed deployment running for a look.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. deploy/local/compose-lib.sh

t0=$SECONDS
step() { echo "compose-test: [$((SECONDS - t0))s] $*"; }

for cmd in podman mmdebstrap curl openssl go git; do
  command -v "$cmd" >/dev/null || fail "$cmd is missing (apt-get install podman mmdebstrap curl openssl; .ci/run installs them)"
done

cache=${XDG_CACHE_HOME:-$HOME/.cache}/fris
compose_version=v2.32.4
compose_bin=$cache/compose-$compose_version/docker-compose
if [ ! -x "$compose_bin" ]; then
  step "building Docker Compose $compose_version from its Go module (once, cached in $cache)"
  mkdir -p "$(dirname "$compose_bin")"
  GOBIN=$(dirname "$compose_bin") GOWORK=off GOFLAGS= go install "github.com/docker/compose/v2/cmd@$compose_version"
  mv "$(dirname "$compose_bin")/cmd" "$compose_bin"
fi

tmp=$(mktemp -d)
proj=fris-ct
export DOCKER_HOST=unix://$tmp/podman.sock
podman system service --time=0 "$DOCKER_HOST" >"$tmp/podman-service.log" 2>&1 &
svc_pid=$!
pump_pid=
cleanup() {
  local rc=$?
  [ -n "$pump_pid" ] && kill "$pump_pid" 2>/dev/null
  if [ $rc -ne 0 ] && [ "${FRIS_COMPOSE_KEEP:-}" = 1 ]; then
    echo "compose-test: left running (FRIS_COMPOSE_KEEP=1): DOCKER_HOST=$DOCKER_HOST $compose_bin -p $proj ..." >&2
    return
  fi
  if [ $rc -ne 0 ] && [ -n "${dc:-}" ]; then
    # Whole logs to a file; then each container's tail, and last the
    # warnings and errors of all of them, which is what a CI's tail shows.
    local all=${FRIS_COMPOSE_LOGS:-/tmp/fris-compose-test.log}
    $dc logs --timestamps >"$all" 2>&1 || true
    echo "compose-test: the last lines of every container's log (all of them in $all):" >&2
    $dc logs --tail 15 >&2 2>&1 || true
    echo "compose-test: the last warnings and errors of every container:" >&2
    grep -E '"level":"(WARN|ERROR)"' "$all" | grep -v '"log":"audit"' | tail -n 30 >&2 || true
  fi
  [ -z "${dc:-}" ] || $dc down -v --remove-orphans >/dev/null 2>&1 || true
  kill "$svc_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
# A stop from outside (Ctrl-C, a CI timeout) cleans up too.
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq 1 100); do [ -S "$tmp/podman.sock" ] && break; sleep 0.1; done

# A free loopback port for the gateway.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export U=http://127.0.0.1:$port
export FRIS_GATEWAY_URL=$U FRIS_GATEWAY_PUBLISH=127.0.0.1:$port

step "1/8 base images (stand-ins for golang, distroless static, redis)"
eval "$(deploy/local/standins/build.sh)"
export GO_IMAGE RUNTIME_IMAGE FRIS_REDIS_IMAGE

# build_images TREE TAG: the five images of the source tree TREE.
build_images() {
  local tree=$1 tag=$2 svc
  for svc in mdr auth upload broker gateway; do
    podman build --quiet -f "$tree/deploy/Dockerfile" --build-arg "SERVICE=$svc" \
      --build-arg "GO_IMAGE=$GO_IMAGE" --build-arg "RUNTIME_IMAGE=$RUNTIME_IMAGE" \
      -t "fris-$svc:$tag" "$tree" >/dev/null 2>"$tmp/build.log" || { cat "$tmp/build.log" >&2; fail "building fris-$svc:$tag"; }
  done
}

prev=${FRIS_PREVIOUS_RELEASE:-$(grep -v '^#' deploy/local/previous-release | head -n 1)}
prevtag=prev-${prev:0:12}
step "2/8 images: the previous release ($prevtag) and today's (compose-test)"
mkdir -p "$tmp/prev"
if ! git cat-file -e "$prev^{commit}" 2>/dev/null; then
  # A shallow clone: fetch the history the upgrade starts from.
  git fetch --quiet --unshallow 2>/dev/null || git fetch --quiet origin "$prev" 2>/dev/null || true
fi
git cat-file -e "$prev^{commit}" 2>/dev/null || fail "the previous release $prev is not in this clone (a shallow clone? git fetch --unshallow)"
git archive "$prev" | tar -x -C "$tmp/prev"
if ! podman image exists "fris-gateway:$prevtag"; then
  # That release's Dockerfile wrote its probe as a heredoc, which buildah
  # before 1.33 cannot read: the same text moves into a file (what this
  # release did), nothing else changes.
  python3 deploy/local/heredoc-to-file.py "$tmp/prev/deploy/Dockerfile"
  build_images "$tmp/prev" "$prevtag"
fi
# Today's images as deploy/README.md builds them: docker compose build
# (podman's API has no BuildKit session, hence the classic builder there).
export FRIS_IMAGE_TAG=compose-test
DOCKER_BUILDKIT=0 $compose_bin -p $proj -f docker-compose.yml build >"$tmp/build.log" 2>&1 || { tail -40 "$tmp/build.log" >&2; fail "docker compose build"; }
for svc in mdr auth upload broker gateway; do
  bytes=$(podman image inspect --format '{{.Size}}' "docker.io/library/fris-$svc:compose-test")
  note=
  ((bytes < 30000000)) || note="  (over the 30 MB target)"
  printf 'compose-test:   fris-%s:compose-test %d.%d MB%s\n' "$svc" $((bytes / 1000000)) $((bytes % 1000000 / 100000)) "$note"
done

# The previous release's compose file, with its images and this machine's
# Redis image. It orders its start by healthchecks, which podman without
# systemd never runs: a pump runs them (deploy/README.md, "podman"). Its
# services get this release's DNS options (docker-compose.yml, dns_opt):
# without them a query aardvark-dns drops costs 5 s.
dns='dns_opt: ["timeout:1", "attempts:5"]'
cat >"$tmp/prev/override.yml" <<EOF
services:
  redis: {image: "$FRIS_REDIS_IMAGE"}
$(for s in mdr auth upload broker gateway; do echo "  $s: {image: \"fris-$s:$prevtag\", $dns}"; done)
$(for s in mdr-seed auth-seed auth-seed-client auth-seed-explorer upload-seed-site1 upload-seed-site2; do echo "  $s: {image: \"fris-${s%%-*}:$prevtag\", $dns}"; done)
  certs: {image: "fris-gateway:$prevtag", $dns}
EOF
dc="$compose_bin -p $proj --project-directory $tmp/prev -f $tmp/prev/docker-compose.yml -f $tmp/prev/override.yml"
$dc down -v --remove-orphans >/dev/null 2>&1 || true
step "3/8 upgrade: the previous release up, data written"
(while :; do
  for c in $(podman ps --filter "label=com.docker.compose.project=$proj" --format '{{.Names}}'); do
    podman healthcheck run "$c" >/dev/null 2>&1 || true
  done
  sleep 2
done) &
pump_pid=$!
timeout 300 $dc up -d --no-build --quiet-pull >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up of the previous release"; }
wait_up 180
wait_seeds 180
settle_uploads 120
write_data "$tmp/data"
$dc down >/dev/null 2>&1
kill "$pump_pid"
pump_pid=

dc="$compose_bin -p $proj -f docker-compose.yml"
step "3/8 upgrade: today's images on the same volumes"
timeout 300 $dc up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up"; }
wait_up 180
wait_seeds 180
verify_data "$tmp/data"

step "4/8 README walkthroughs (groups A-D) and an Explorer sign-in"
hardened "$proj"
walkthrough
write_data "$tmp/data2"

step "5/8 restart: down (volumes kept), up"
$dc down >/dev/null 2>&1
timeout 300 $dc up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up after down"; }
wait_up 180
wait_seeds 180
verify_data "$tmp/data"
verify_data "$tmp/data2"

step "6/8 rotate the key secret (new first, the old one after it for one start, then the new one alone) and the CA"
demo_secret=TpIfDxwiEFWehgt4H2qYVUzgyvBpOWkgrC33R1jkG0U=
new_secret=$(head -c 32 /dev/urandom | base64)
FRIS_AUTH_KEY_SECRETS="$new_secret,$demo_secret" timeout 300 $dc up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up with the new key secret first"; }
wait_up 180
wait_seeds 180
verify_data "$tmp/data"
export FRIS_AUTH_KEY_SECRETS=$new_secret
timeout 300 $dc up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up with the new key secret alone"; }
wait_up 180
wait_seeds 180
verify_data "$tmp/data"
ca_before=$($dc run --rm --no-deps -T volumes-tool sha256sum /tls/ca.pem)
$dc run --rm --no-deps -T volumes-tool sh -c 'rm -f /tls/*.pem'
timeout 300 $dc up -d --no-build --force-recreate >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up with a new CA"; }
wait_up 180
wait_seeds 180
ca_after=$($dc run --rm --no-deps -T volumes-tool sha256sum /tls/ca.pem)
[ "$ca_before" != "$ca_after" ] || fail "the CA did not change"
verify_data "$tmp/data"
verify_data "$tmp/data2"

step "7/8 backup (online), wipe (down -v), restore"
backup=$tmp/backup
mkdir -p "$backup"
deploy/compose-backup.sh "$backup" $dc
ls -l "$backup" | sed 's/^/compose-test:   /'
$dc down -v >/dev/null 2>&1
[ -z "$(podman volume ls -q --filter "label=com.docker.compose.project=$proj")" ] || fail "volumes left after down -v"
deploy/compose-restore.sh "$backup" $dc
timeout 300 $dc up -d --no-build >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log" >&2; fail "compose up after the restore"; }
wait_up 180
wait_seeds 180
verify_data "$tmp/data"
verify_data "$tmp/data2"

step "8/8 down -v"
$dc down -v --remove-orphans >/dev/null 2>&1
left=$(podman ps -a -q --filter "label=com.docker.compose.project=$proj"; podman volume ls -q --filter "label=com.docker.compose.project=$proj")
[ -z "$left" ] || fail "left after down -v: $left"
# The build stages' untagged images (hundreds of MB per source change); the
# next build recompiles from the Go build cache mount in about a minute.
podman image prune -f >/dev/null
echo "compose-test: passed: $checks checks in $((SECONDS - t0)) s (previous release ${prev:0:12} -> this tree: upgrade, walkthroughs, restart, backup and restore)"
