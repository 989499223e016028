#!/usr/bin/env bash
# A private PostgreSQL cluster the project starts itself (the chaos kit and tests restart it; the machine's shared server
# on 5432 is never touched).
# usage: scripts/postgres.sh start|stop|restart|status|url|port|logs
# Data and log live in .postgres/ (override with PG_HOME_DIR, git-ignored). Listens on 127.0.0.1:55432 (PG_PRIVATE_PORT)
# unless that port is taken by another process (a cluster of another checkout, a stale one): then `start` takes the
# next free port and records it in $home/port, so `url` always names the running cluster. Trust auth, user postgres,
# database postgres. Uses the Debian server binaries (PG_BIN, default the newest /usr/lib/postgresql/*/bin). As root,
# the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
default_home=$root/.postgres
# As root the server runs as `postgres`, which may not reach a private checkout (a mktemp -d is 0700): then the
# cluster lives in a directory of its own under /tmp, named after the checkout.
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$root" 2>/dev/null; then
  default_home=/tmp/effectively-postgres-$(printf '%s' "$root" | cksum | cut -d' ' -f1)
fi
home=${PG_HOME_DIR:-$default_home}
data=$home/data
logfile=$home/server.log
port_file=$home/port
# The port it wants: PG_PRIVATE_PORT, else the one it had last time (a restart keeps the URL its clients hold), else 55432.
wanted_port=${PG_PRIVATE_PORT:-$(cat "$port_file" 2>/dev/null || echo 55432)}
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}

log() { echo "postgres.sh: $*" >&2; }

[ -n "$bin" ] && [ -x "$bin/pg_ctl" ] || {
  log "no PostgreSQL server binaries found (set PG_BIN, or apt-get install postgresql)"
  exit 1
}

# Runs a server binary as the cluster's owner: `postgres` when we are root, ourselves otherwise.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

running() { [ -f "$data/postmaster.pid" ] && as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

# The port of this cluster: the running server's (line 4 of postmaster.pid), else the one recorded at its last start.
current_port() {
  local p=""
  if running; then p=$(sed -n 4p "$data/postmaster.pid" 2>/dev/null || true); fi
  [ -n "$p" ] || p=$(cat "$port_file" 2>/dev/null || true)
  echo "${p:-$wanted_port}"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The wanted port, or the next free one above it when another process holds it.
free_port() {
  local p
  for p in $(seq "$wanted_port" $((wanted_port + 200))); do
    if ! port_open "$p"; then echo "$p"; return 0; fi
  done
  log "no free port in $wanted_port..$((wanted_port + 200))"
  exit 1
}

init() {
  if [ -f "$data/PG_VERSION" ]; then return 0; fi
  log "initdb into $data"
  # --no-sync: a cluster of tests and the chaos kit (killed, never powered off) need not flush initdb's files; the
  # flush took 5 of 9 s here under load.
  as_owner "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync \
    >"$home/initdb.log" 2>&1 \
    || { log "initdb failed:"; cat "$home/initdb.log" >&2; exit 1; }
  # Small settings for a 2-core machine shared with Kafka and the tests; the socket stays in our own directory. The
  # port is given at each start (it may change when the usual one is taken).
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$home'
max_connections = 100
shared_buffers = 64MB
max_wal_size = 512MB
logging_collector = off
CONF
}

# Logical decoding for the relay that reads the write-ahead log (`source: 'wal'`): given at each start, so a cluster
# initialised before these settings gets them too. PG_WAL_SETTINGS replaces them (e.g. to show a server without it).
wal_settings=${PG_WAL_SETTINGS--c wal_level=logical -c max_replication_slots=16 -c max_wal_senders=16}

# Two starts at once (two tests, two checkouts) must neither start one cluster twice nor pick the same free port.
lock() {
  mkdir -p "$home"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$home"
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$home" 2>/dev/null; then
    log "the postgres user cannot reach $home (a parent directory is private): choose another PG_HOME_DIR"
    exit 1
  fi
  exec 9>"$home/.lock"
  flock -w 120 9 || { log "could not lock $home/.lock"; exit 1; }
  # One lock file for every user of the machine (flock needs no write access: opened read-only).
  local ports_lock=/tmp/effectively-postgres-ports.lock
  [ -e "$ports_lock" ] || { : >"$ports_lock" && chmod 666 "$ports_lock"; } 2>/dev/null || true
  exec 8<"$ports_lock"
  flock -w 120 8 || { log "could not lock $ports_lock"; exit 1; }
}

start() {
  lock
  if running; then log "already running on 127.0.0.1:$(current_port)"; return 0; fi
  init
  local port
  port=$(free_port)
  [ "$port" = "$wanted_port" ] || log "127.0.0.1:$wanted_port is taken by another process; using $port"
  echo "$port" >"$port_file"
  [ "$(id -u)" -eq 0 ] && { touch "$logfile"; chown postgres: "$logfile"; }
  as_owner "$bin/pg_ctl" -D "$data" -l "$logfile" -o "-p $port $wal_settings" -w -t "${PG_START_TIMEOUT:-60}" start >/dev/null 8>&- 9>&- \
    || { log "start failed; last log lines:"; tail -n 30 "$logfile" >&2; exit 1; }
  log "started on 127.0.0.1:$port"
}

# Fast shutdown: sessions are cut (57P01), the server checkpoints and exits; what was committed stays committed.
stop() {
  if ! running; then log "not running"; return 0; fi
  as_owner "$bin/pg_ctl" -D "$data" -m fast -w -t ${PG_STOP_TIMEOUT:-60} stop >/dev/null
  log "stopped"
}

status() {
  if running; then echo "running port=$(current_port) data=$data"; return 0; fi
  echo "stopped"
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) status ;;
  url) echo "postgres://postgres@127.0.0.1:$(current_port)/postgres" ;;
  port) current_port ;;
  logs) tail -n "${2:-100}" "$logfile" ;;
  *) echo "usage: $0 start|stop|restart|status|url|port|logs" >&2; exit 2 ;;
esac
