#!/usr/bin/env bash
# make buildkit-check: deploy/Dockerfile builds with Docker BuildKit (not
# only with podman/buildah, which make compose-test uses), and the images run.
#
#  1. tools: buildkitd and buildctl from BuildKit's Go module, and a registry
#     from distribution's, built once and cached
#  2. base images: the local stand-ins (deploy/local/standins/build.sh),
#     pushed to a private registry on a free loopback port, since BuildKit
#     pulls base images from a registry and this machine reaches none
#  3. buildkitd, rootful, OCI worker with runc, on a private socket and its
#     own state directory (cached between runs)
#  4. lint: BuildKit's Dockerfile checks (what `docker build --check` runs),
#     honouring the file's `# check=` directive; any warning fails
#  5. build the five images with BuildKit's built-in Dockerfile frontend,
#     exactly as `docker build` does; a warning during the build fails too
#  6. load them into podman and run them: every image as non-root with a
#     read-only root filesystem; the mdr image serves on the embedded store,
#     answers its readiness probe and imports its demo registry
#
# Every process started here is stopped at exit; the images loaded into
# podman are removed again (FRIS_BUILDKIT_KEEP=1 keeps them, and a failed
# run's buildkitd and registry, for a look).
# Needs root (rootful buildkitd), runc, podman, mmdebstrap and Go.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

t0=$SECONDS
step() { echo "buildkit-check: [$((SECONDS - t0))s] $*"; }
fail() { echo "buildkit-check: FAIL: $*" >&2; exit 1; }

for cmd in podman runc mmdebstrap curl go python3 flock; do
  command -v "$cmd" >/dev/null || fail "$cmd is missing (apt-get install podman runc mmdebstrap curl python3 util-linux)"
done
[ "$(id -u)" = 0 ] || fail "needs root: buildkitd runs rootful here (rootless BuildKit needs rootlesskit)"

services=(mdr auth upload broker gateway)
buildkit_version=v0.34.2 # the newest whose go.mod asks for no newer Go than 1.26.8
registry_version=v3.1.2
cache=${XDG_CACHE_HOME:-$HOME/.cache}/fris
bkbin=$cache/buildkit-$buildkit_version
regbin=$cache/registry-$registry_version
state=$cache/buildkit-check # buildkitd's state and the registry's blobs
mkdir -p "$state"
# One run at a time: buildkitd locks its state directory.
exec 9>"$state/lock"
flock -n 9 || fail "another buildkit-check is running (lock $state/lock)"

step "1/6 tools: BuildKit $buildkit_version, registry $registry_version (built once, cached in $cache)"
if [ ! -x "$bkbin/buildkitd" ] || [ ! -x "$bkbin/buildctl" ]; then
  # Not `go install ...@version`: BuildKit's go.mod has exclude directives,
  # which go install refuses; so build inside the downloaded module.
  step "building buildkitd and buildctl from github.com/moby/buildkit@$buildkit_version (about 2 min)"
  src=$(GOWORK=off GOFLAGS= go mod download -json "github.com/moby/buildkit@$buildkit_version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || fail "go mod download github.com/moby/buildkit@$buildkit_version gave no directory"
  mkdir -p "$bkbin.tmp"
  (cd "$src" && GOWORK=off GOFLAGS= CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/moby/buildkit/version.Version=$buildkit_version" \
    -o "$bkbin.tmp/" ./cmd/buildkitd ./cmd/buildctl)
  rm -rf "$bkbin" && mv "$bkbin.tmp" "$bkbin"
fi
if [ ! -x "$regbin/registry" ]; then
  step "building the registry from github.com/distribution/distribution/v3@$registry_version (about 1.5 min)"
  mkdir -p "$regbin.tmp"
  GOBIN=$regbin.tmp GOWORK=off GOFLAGS= CGO_ENABLED=0 \
    go install -trimpath -ldflags "-s -w" "github.com/distribution/distribution/v3/cmd/registry@$registry_version"
  rm -rf "$regbin" && mv "$regbin.tmp" "$regbin"
fi

tmp=$(mktemp -d)
sock=$tmp/buildkitd.sock
bk_pid= reg_pid= ctr= loaded=()
stop() { # stop PID: SIGTERM, then SIGKILL after 15 s
  local pid=$1
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  set +e
  if [ $rc -ne 0 ] && [ "${FRIS_BUILDKIT_KEEP:-}" = 1 ]; then
    echo "buildkit-check: left running (FRIS_BUILDKIT_KEEP=1): buildkitd $bk_pid ($sock), registry $reg_pid; logs in $tmp" >&2
    return
  fi
  [ -n "$ctr" ] && podman rm -f -v "$ctr" >/dev/null 2>&1
  [ -n "$bk_pid" ] && stop "$bk_pid"
  [ -n "$reg_pid" ] && stop "$reg_pid"
  if [ "${FRIS_BUILDKIT_KEEP:-}" != 1 ] && ((${#loaded[@]})); then
    podman rmi "${loaded[@]}" >/dev/null 2>&1
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "2/6 base images: stand-ins, pushed to a registry on loopback"
eval "$(deploy/local/standins/build.sh)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
reg=127.0.0.1:$port
mkdir -p "$state/registry"
cat >"$tmp/registry.yml" <<EOF
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $state/registry
http:
  addr: $reg
EOF
OTEL_TRACES_EXPORTER=none "$regbin/registry" serve "$tmp/registry.yml" >"$tmp/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 1 100); do curl -fs "http://$reg/v2/" >/dev/null && break; sleep 0.1; done
curl -fs "http://$reg/v2/" >/dev/null || { cat "$tmp/registry.log" >&2; fail "the registry did not start on $reg"; }
# localhost/fris-standin/x:t -> 127.0.0.1:PORT/fris-standin/x:t. Skipped
# when the registry (its storage is kept between runs) already holds the
# image: podman would compress every layer again to find that out (about
# 15 s for the Go image), as the port, and so the registry's name, changes.
push() {
  local name=${1#localhost/}
  local to=$reg/$name have
  have=$(curl -fs -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
    "http://$reg/v2/${name%:*}/manifests/${name##*:}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["digest"])' 2>/dev/null || true)
  if [ "$have" != "sha256:$(podman image inspect --format '{{.Id}}' "$1")" ]; then
    podman push --quiet --tls-verify=false "$1" "$to" >&2
  fi
  echo "$to"
}
go_image=$(push "$GO_IMAGE")
runtime_image=$(push "$RUNTIME_IMAGE")
t_base=$((SECONDS - t0))

step "3/6 buildkitd (OCI worker, runc) on $sock"
cat >"$tmp/buildkitd.toml" <<EOF
[worker.oci]
  enabled = true
  binary = "runc"
  networkMode = "host"
  gc = true
  # One rule instead of the defaults, whose first rule keeps only 512 MB of
  # cache mounts: the Go module and build caches are what make a rebuild
  # after a source change take seconds.
  [[worker.oci.gcpolicy]]
    all = true
    reservedSpace = "2GB"
    maxUsedSpace = "8GB"
[worker.containerd]
  enabled = false
[registry."$reg"]
  http = true
  insecure = true
EOF
# OTEL_*: the builds' traces would go wherever this shell's settings point.
env -u OTEL_EXPORTER_OTLP_ENDPOINT -u OTEL_TRACES_EXPORTER \
  "$bkbin/buildkitd" --config "$tmp/buildkitd.toml" --root "$state/root" \
  --addr "unix://$sock" --otel-socket-path "$tmp/otel.sock" >"$tmp/buildkitd.log" 2>&1 &
bk_pid=$!
bctl() { "$bkbin/buildctl" --addr "unix://$sock" "$@"; }
for _ in $(seq 1 300); do
  bctl debug workers >/dev/null 2>&1 && break
  kill -0 "$bk_pid" 2>/dev/null || { tail -20 "$tmp/buildkitd.log" >&2; fail "buildkitd exited"; }
  sleep 0.1
done
bctl debug workers >/dev/null || { tail -20 "$tmp/buildkitd.log" >&2; fail "buildkitd did not answer on $sock"; }

# The arguments of `docker build -f deploy/Dockerfile --build-arg ... .`.
dockerfile_args() {
  echo --frontend dockerfile.v0 --local context=. --local dockerfile=deploy --opt filename=Dockerfile \
    --opt "build-arg:SERVICE=$1" --opt "build-arg:GO_IMAGE=$go_image" --opt "build-arg:RUNTIME_IMAGE=$runtime_image"
}

step "4/6 lint: BuildKit's Dockerfile checks"
t=$SECONDS
for svc in "${services[@]}"; do
  # The lint subrequest prints its findings (nothing when there are none)
  # and exits 0 either way.
  # shellcheck disable=SC2046
  out=$(bctl build --progress quiet $(dockerfile_args "$svc") --opt requestid=frontend.lint)
  [ -z "$out" ] || { echo "$out" >&2; fail "BuildKit's checks warn about deploy/Dockerfile (SERVICE=$svc)"; }
done
t_lint=$((SECONDS - t))

step "5/6 build: ${services[*]}"
t=$SECONDS
times=()
for svc in "${services[@]}"; do
  ts=$SECONDS
  # shellcheck disable=SC2046
  if ! bctl build --progress plain $(dockerfile_args "$svc") \
    --output "type=docker,name=localhost/fris-$svc:buildkit-check,dest=$tmp/$svc.tar" >"$tmp/build-$svc.log" 2>&1; then
    tail -60 "$tmp/build-$svc.log" >&2
    fail "BuildKit could not build the $svc image"
  fi
  if grep -E '^#[0-9]+ WARN' "$tmp/build-$svc.log" >&2; then
    fail "BuildKit warned while building the $svc image"
  fi
  times+=("$svc $((SECONDS - ts))s")
done
t_build=$((SECONDS - t))

step "6/6 run: load into podman, start every image as non-root on a read-only root"
t=$SECONDS
sizes=()
for svc in "${services[@]}"; do
  img=localhost/fris-$svc:buildkit-check
  podman load --quiet -i "$tmp/$svc.tar" >/dev/null
  loaded+=("$img")
  conf=$(podman image inspect --format '{{.Config.User}} {{join .Config.Entrypoint " "}}' "$img")
  [ "$conf" = "65532:65532 /usr/local/bin/fris-service" ] || fail "$img: user and entrypoint are \"$conf\""
  podman run --rm --read-only --network none "$img" -h >"$tmp/run-$svc.log" 2>&1 ||
    { cat "$tmp/run-$svc.log" >&2; fail "$img: \`$svc -h\` failed"; }
  sizes+=("$svc $(podman image inspect --format '{{.Size}}' "$img" | awk '{printf "%.1f MB", $1 / 1e6}')")
done
# The mdr image in earnest: serve on the embedded store in /data (a volume;
# the rest of the file system is read-only), become ready, import the demo
# registry the image carries.
ctr=fris-buildkit-check-mdr-$$
podman run -d --name "$ctr" --read-only --network none -v /data localhost/fris-mdr:buildkit-check \
  serve -insecure-plaintext >/dev/null
ready=
for _ in $(seq 1 100); do
  if podman exec "$ctr" mdr probe http://127.0.0.1:9202/readyz >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.2
done
[ -n "$ready" ] || { podman logs "$ctr" >&2; fail "the mdr image did not become ready"; }
podman exec "$ctr" mdr import -insecure-plaintext /demo/mdr16.json >/dev/null ||
  fail "the mdr image could not import its demo registry"
podman exec "$ctr" mdr namespaces -insecure-plaintext | grep -q '^mdr16 ' ||
  fail "the mdr image lists no mdr16 namespace after the import"
t_run=$((SECONDS - t))

join() { local IFS=,; echo "$*" | sed 's/,/, /g'; }
echo "buildkit-check: ok in $((SECONDS - t0))s (tools and base images ${t_base}s, lint ${t_lint}s," \
  "build ${t_build}s [$(join "${times[@]}")], run ${t_run}s); BuildKit $buildkit_version;" \
  "images: $(join "${sizes[@]}"); BuildKit state $(du -sh "$state/root" | cut -f1) in $state"
