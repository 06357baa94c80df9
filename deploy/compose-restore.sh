#!/usr/bin/env bash
# deploy/compose-restore.sh DIR [COMPOSE...]: puts a backup made by
# compose-backup.sh back into a FRIS docker compose deployment that is down
# (`docker compose down`, or `down -v` / a new host: the volumes are made).
# Then `docker compose up -d`. Redis's data goes in as the base of its
# append-only file (with appendonly on, Redis 7 ignores a dump.rdb), the
# certs volume as it was. COMPOSE as for compose-backup.sh.
set -euo pipefail
dir=${1:?usage: compose-restore.sh DIR [COMPOSE...]}
shift
dc=("$@")
((${#dc[@]})) || dc=(docker compose)
for f in redis.rdb tls.tar; do
  if [ ! -s "$dir/$f" ]; then
    echo "restore: $dir/$f is missing" >&2
    exit 1
  fi
done
if [ -n "$("${dc[@]}" ps -q redis 2>/dev/null)" ]; then
  echo "restore: the deployment is running; stop it first (docker compose down)" >&2
  exit 1
fi
# The toolbox runs as root: the files get the owner of /data (Redis's user,
# whatever its id in the image) and the certs volume its owners as saved.
"${dc[@]}" run --rm --no-deps -T volumes-tool sh -c 'cat >/data/fris-restore.rdb && redis-check-rdb /data/fris-restore.rdb >/dev/null' <"$dir/redis.rdb"
"${dc[@]}" run --rm --no-deps -T volumes-tool sh -c '
  cd /data && rm -rf appendonlydir dump.rdb && mkdir appendonlydir &&
  mv fris-restore.rdb appendonlydir/appendonly.aof.1.base.rdb &&
  printf "file appendonly.aof.1.base.rdb seq 1 type b\n" >appendonlydir/appendonly.aof.manifest &&
  chown -R "$(stat -c %u:%g /data)" appendonlydir'
"${dc[@]}" run --rm --no-deps -T volumes-tool sh -c 'find /tls -mindepth 1 -delete && tar -C /tls -xpf -' <"$dir/tls.tar"
echo "restore: Redis's data and the certs volume are back; now: docker compose up -d"
