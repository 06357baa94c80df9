#!/usr/bin/env bash
# `make build`: build each binary into BIN, one step line per binary and,
# on a cold cache (a fresh machine compiles several hundred packages for
# minutes), a line every 25 packages compiled, so the build never looks
# hung. Compiler errors pass through as they are. The tag grpcnotrace
# leaves out gRPC's x/net/trace pages (never enabled here): their
# html/template keeps every exported method of every type in the binary,
# about 9 MB of each service (deploy/README.md, "Images").
#
#   build.sh BIN PACKAGE...
set -euo pipefail
cd "$(dirname "$0")/../.."

bin=$1
shift
n=$#
i=0
start=$SECONDS
for pkg in "$@"; do
  i=$((i + 1))
  echo "build: [$i/$n] ${bin#"$PWD"/}/$(basename "$pkg") ($pkg)"
  # -v names each package as it is compiled (nothing when cached): a line
  # that is a bare import path is progress, anything else is go's own.
  go build -tags grpcnotrace -v -o "$bin/" "$pkg" 2>&1 | awk '
    /^[^ :]+$/ { if (++c % 25 == 0) printf "build:   %d packages compiled (%s)\n", c, $0; fflush(); next }
    { print; fflush() }
    END { if (c % 25) printf "build:   %d packages compiled\n", c }'
done
echo "build: done in $((SECONDS - start))s"
