#!/usr/bin/env bash
# deploy/compose-backup.sh DIR [COMPOSE...]: an online backup of a FRIS
# docker compose deployment into DIR, while it serves:
#   redis.rdb  every service's data (compose runs them all on Redis): Redis's
#              own point-in-time snapshot (a fork, as for a replica), checked
#              with redis-check-rdb before it is copied out
#   tls.tar    the certs volume: the deployment's CA (its key included) and
#              every component's certificate
# Both hold secrets (password hashes, sealed signing keys, hashed tokens, the
# CA key): keep DIR like the key secret, but not next to it
# (deploy/README.md, "Backup and restore"). COMPOSE is the compose command
# with its options (default: docker compose), run from the directory of
# docker-compose.yml.
set -euo pipefail
dir=${1:?usage: compose-backup.sh DIR [COMPOSE...]}
shift
dc=("$@")
((${#dc[@]})) || dc=(docker compose)
mkdir -p "$dir"
umask 077
"${dc[@]}" exec -T redis sh -c 'redis-cli --rdb /data/fris-backup.rdb >/dev/null && redis-check-rdb /data/fris-backup.rdb >/dev/null'
"${dc[@]}" exec -T redis cat /data/fris-backup.rdb >"$dir/redis.rdb.tmp"
"${dc[@]}" exec -T redis rm -f /data/fris-backup.rdb
mv "$dir/redis.rdb.tmp" "$dir/redis.rdb"
"${dc[@]}" run --rm --no-deps -T volumes-tool tar -C /tls -cf - . >"$dir/tls.tar.tmp"
mv "$dir/tls.tar.tmp" "$dir/tls.tar"
echo "backup: $dir/redis.rdb ($(wc -c <"$dir/redis.rdb") bytes), $dir/tls.tar ($(tar -tf "$dir/tls.tar" | grep -c pem) PEM files)"
