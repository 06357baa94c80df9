#!/usr/bin/env bash
# A throwaway Redis Cluster for tests: 3 masters with one replica each, in
# memory only, on loopback.
#
#   redis-cluster.sh start DIR PORT1 ... PORT6   prints the cluster's URL
#   redis-cluster.sh stop DIR                    stops the nodes, removes DIR
#
# Each node's cluster bus listens on its port + 10000, so the caller picks
# ports whose bus port is free too. start fails (after stopping what it
# started) when the cluster is not ready within a few seconds.
set -euo pipefail

stop() {
  local dir=$1
  [[ -d "$dir" ]] || return 0
  # Read the pids once: each node removes its pidfile as it exits.
  local pids=() pidfile
  for pidfile in "$dir"/*.pid; do
    [[ -f "$pidfile" ]] && pids+=("$(cat "$pidfile" 2>/dev/null)")
  done
  local pid
  for pid in "${pids[@]}"; do
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  done
  # Wait briefly for the nodes to exit so their ports are free again.
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${pids[@]}"; do
      [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    ((alive == 0)) && break
    sleep 0.05
  done
  rm -rf "$dir"
}

start() {
  local dir=$1
  shift
  if (($# != 6)); then
    echo "redis-cluster: want 6 ports, got $#" >&2
    return 2
  fi
  mkdir -p "$dir"
  local p
  for p in "$@"; do
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes-$p.conf" --cluster-node-timeout 2000 \
      --repl-diskless-sync-delay 0 \
      --save "" --appendonly no --dir "$dir" --logfile "$dir/redis-$p.log" \
      --pidfile "$dir/redis-$p.pid" --daemonize yes >/dev/null
  done
  local addrs=() up
  for p in "$@"; do
    addrs+=("127.0.0.1:$p")
    up=0
    for _ in $(seq 1 100); do
      if redis-cli -p "$p" ping >/dev/null 2>&1; then up=1 && break; fi
      sleep 0.02
    done
    if ((up == 0)); then
      echo "redis-cluster: node on port $p did not start (see $dir/redis-$p.log)" >&2
      return 1
    fi
  done
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
    >"$dir/create.log" 2>&1 || {
    echo "redis-cluster: create failed:" >&2
    cat "$dir/create.log" >&2
    return 1
  }
  # Every node must agree that all slots are served before a client that
  # connects to any of them sees the whole cluster.
  local ok
  for _ in $(seq 1 250); do
    ok=1
    for p in "$@"; do
      redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || {
        ok=0
        break
      }
    done
    ((ok == 1)) && break
    sleep 0.02
  done
  if ((ok == 0)); then
    echo "redis-cluster: cluster_state not ok on every node after 5s" >&2
    return 1
  fi
  # A replica that has not finished its first sync holds nothing: a test
  # that kills its master would see the promoted replica empty. Wait until
  # every replica's (three of the six nodes') link to its master is up.
  local synced
  for _ in $(seq 1 500); do
    synced=0
    for p in "$@"; do
      redis-cli -p "$p" info replication 2>/dev/null | grep -q '^master_link_status:up' &&
        synced=$((synced + 1))
    done
    ok=0
    ((synced == $# / 2)) && ok=1 && break
    sleep 0.02
  done
  if ((ok == 0)); then
    echo "redis-cluster: a replica had not synced with its master after 10s" >&2
    return 1
  fi
  local IFS=,
  echo "redis://${addrs[*]}"
}

case "${1:-}" in
start)
  shift
  dir=$1
  start "$@" || {
    rc=$?
    stop "$dir"
    exit "$rc"
  }
  ;;
stop) stop "$2" ;;
*)
  echo "usage: $0 start DIR PORT1 ... PORT6 | stop DIR" >&2
  exit 2
  ;;
esac
