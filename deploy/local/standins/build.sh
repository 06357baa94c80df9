#!/usr/bin/env bash
# Builds, with podman, local stand-ins for the base images deploy/Dockerfile
# and docker-compose.yml name, for a machine that reaches no image registry
# (make compose-test uses them). Each is built only when missing or when its
# inputs changed (a label holds their hash), so later runs take seconds.
# Prints the three image names as shell assignments on stdout:
#   GO_IMAGE=...  RUNTIME_IMAGE=...  FRIS_REDIS_IMAGE=...
# Needs podman and mmdebstrap (Debian packages) and this host's Go
# toolchain; progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=localhost/fris-standin
suite=bookworm
say() { echo "standins: $*" >&2; }

# label_of IMAGE: the stand-in label of IMAGE, empty when it is missing.
label_of() { podman image inspect --format '{{index .Labels "fris.standin"}}' "$1" 2>/dev/null || true; }

# rootfs IMAGE [mmdebstrap options]: a Debian $suite minbase root file
# system, imported as IMAGE. Debian's packages come through this host's apt
# configuration (mirror, proxy), which a container might not have.
rootfs() {
  local img=$1; shift
  local want
  want=$(printf '%s ' "$suite" "$@" | sha256sum | cut -c1-16)
  if [ "$(label_of "$img")" = "$want" ]; then return; fi
  say "$img: mmdebstrap --variant=minbase $* $suite (about a minute)"
  local tmp
  tmp=$(mktemp -d)
  mmdebstrap --quiet --variant=minbase "$@" "$suite" "$tmp/rootfs.tar" >&2
  podman import --quiet --change "LABEL fris.standin=$want" "$tmp/rootfs.tar" "$img" >/dev/null
  rm -rf "$tmp"
}

goroot=$(go env GOROOT)
ca=/etc/ssl/certs/ca-certificates.crt
# build IMAGE CONTAINERFILE BASE [extra hash input...]: podman build of a
# stand-in over BASE, with this host's GOROOT and CA bundle mounted at build
# time.
build() {
  local img=$1 file=$2 base=$3; shift 3
  local want
  want=$( { cat "$here/$file"; label_of "$base"; sha256sum "$ca"; printf '%s\n' "$@"; } | sha256sum | cut -c1-16)
  if [ "$(label_of "$img")" = "$want" ]; then return; fi
  say "$img: podman build -f $file"
  podman build --quiet --layers=false \
    --volume "$goroot:/host/go:ro" --volume "$ca:/host/ca.crt:ro" \
    --build-arg "BASE=$base" --build-arg "GOPROXY=$(go env GOPROXY)" --build-arg "GOSUMDB=$(go env GOSUMDB)" \
    --label "fris.standin=$want" -t "$img" -f "$here/$file" "$here" >/dev/null
}

rootfs "$prefix/debian:$suite"
rootfs "$prefix/debian-redis:$suite" --include=redis-server,redis-tools
gover=$(go env GOVERSION)
build "$prefix/golang:${gover#go}-$suite" golang.Containerfile "$prefix/debian:$suite" "$gover" "$(go env GOPROXY)" "$(go env GOSUMDB)"
build "$prefix/static:nonroot" static.Containerfile "$prefix/debian:$suite"
build "$prefix/redis:7-$suite" redis.Containerfile "$prefix/debian-redis:$suite"
say "ready: $prefix/golang:${gover#go}-$suite, $prefix/static:nonroot, $prefix/redis:7-$suite"
echo "GO_IMAGE=$prefix/golang:${gover#go}-$suite"
echo "RUNTIME_IMAGE=$prefix/static:nonroot"
echo "FRIS_REDIS_IMAGE=$prefix/redis:7-$suite"
