#!/usr/bin/env bash
# Real Apache Kafka brokers (KRaft) for tests, the chaos run and benchmarks.
#
# Single node (the default; CI and the tests use it): 127.0.0.1:9092, controller :9093.
#   kafka.sh fetch | start | stop | status | reset | logs [lines] | kill
#   `kill` SIGKILLs the broker and keeps its data: `start` brings it back with everything it had acknowledged.
#
# Cluster (--nodes N, N >= 2): each node its own JVM, ports and data dir; node n listens on
# 127.0.0.1:$((19092 + 2(n-1))) (controller one above), so 19092/19094/19096 for three nodes.
# Replication factor min(N, 3) by default, min.insync.replicas 2.
#   kafka.sh start --nodes 3 | stop --nodes 3 | status --nodes 3 | reset --nodes 3 | brokers --nodes 3
#   kafka.sh kill-node N    SIGKILL one node (its data stays)
#   kafka.sh start-node N   start one node again and wait until it serves
#   kafka.sh logs-node N [lines]
#
# The jars come from Maven Central through scripts/kafka/pom.xml and are cached in .kafka/libs (git-ignored).
# Data and logs live in .kafka/ (override with KAFKA_HOME_DIR; the cluster in $KAFKA_HOME_DIR/cluster, override with
# KAFKA_CLUSTER_DIR). Other knobs: KAFKA_PORT, KAFKA_CONTROLLER_PORT, KAFKA_HEAP (single node),
# KAFKA_CLUSTER_PORT (first node's port), KAFKA_CLUSTER_HEAP, KAFKA_START_TIMEOUT (seconds), KAFKA_LIBS.
# KAFKA_EXTRA_LISTENERS (single node): NAME:PORT:ADVERTISED_PORT,... more plaintext listeners, each advertising another
# port (a proxy's, the chaos kit's fault proxy): a client bootstrapped through that port is told that port in metadata.
# `start` returns once every node logged `Kafka Server started` (unfenced and serving), not when a port opens.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
home=${KAFKA_HOME_DIR:-$root/.kafka}
libs=${KAFKA_LIBS:-$home/libs}
cluster=${KAFKA_CLUSTER_DIR:-$home/cluster}
port=${KAFKA_PORT:-9092}
cport=${KAFKA_CONTROLLER_PORT:-9093}
heap=${KAFKA_HEAP:--Xmx512m}
cluster_port=${KAFKA_CLUSTER_PORT:-19092}
cluster_heap=${KAFKA_CLUSTER_HEAP:--Xmx384m}
timeout=${KAFKA_START_TIMEOUT:-90}
extra_listeners=${KAFKA_EXTRA_LISTENERS:-}

log() { echo "kafka.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# ---- one broker process, described by its directory -------------------------------------------------------------
# A node directory holds server.properties, broker.pid, broker.log and data/. The single node's directory is $home
# (the layout it always had); cluster node n's is $cluster/node<n>.

# Alive and really a Kafka broker (a pid file can outlive its process, and its pid can be reused).
alive() {
  local pidfile=$1/broker.pid pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [ -n "$pid" ] && grep -qa 'kafka.Kafka' "/proc/$pid/cmdline" 2>/dev/null
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

fetch() {
  if [ -f "$libs/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || die "mvn (Apache Maven) is required to fetch the broker"
  command -v java >/dev/null || die "java 17+ is required to run the broker"
  mkdir -p "$libs"
  log "fetching the broker and its libraries from Maven Central into $libs"
  mvn -q -B -f "$root/scripts/kafka/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" >&2
  touch "$libs/.complete"
}

write_log4j() {
  mkdir -p "$1"
  cat >"$1/log4j2.properties" <<'L4J'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
logger.controller.name = org.apache.kafka.controller
logger.controller.level = WARN
L4J
}

# format <node dir> <log4j dir> [cluster id]: once; a formatted directory is kept as it is (its data survives).
format() {
  local dir=$1 l4j=$2 id=${3:-}
  [ -f "$dir/data/meta.properties" ] && return 0
  [ -n "$id" ] || id=$(random_id)
  rm -rf "$dir/data"
  mkdir -p "$dir/data"
  java -cp "$libs/*" -Dlog4j2.configurationFile="$l4j/log4j2.properties" \
    kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" >"$dir/format.log" 2>&1 \
    || { log "storage format failed:"; cat "$dir/format.log" >&2; exit 1; }
}

random_id() { java -cp "$libs/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1; }

# launch <node dir> <log4j dir> <heap>: starts the JVM in the background (no waiting).
launch() {
  local dir=$1 l4j=$2 jheap=$3
  : >"$dir/broker.log"
  # setsid: the broker outlives the shell that started it and is not hit by its job-control signals.
  # 9>&-: the broker must not inherit the lock this script holds while it starts.
  setsid java $jheap -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$l4j/log4j2.properties" \
    -cp "$libs/*" kafka.Kafka "$dir/server.properties" >>"$dir/broker.log" 2>&1 </dev/null 9>&- &
  echo $! >"$dir/broker.pid"
}

# wait_started <node dir> <label>: an open port is not enough; the broker serves once it logs that it started.
wait_started() {
  local dir=$1 label=$2 deadline=$((SECONDS + timeout))
  until grep -q "Kafka Server started" "$dir/broker.log" 2>/dev/null; do
    # The pid recorded at launch, alive whatever its command line: until the launching subshell has exec'd setsid and
    # java, /proc/<pid>/cmdline is still this script's, and `alive` (which looks for kafka.Kafka there) would call a
    # broker that is starting dead (seen on a loaded machine).
    if ! kill -0 "$(cat "$dir/broker.pid")" 2>/dev/null; then
      log "$label exited during start; last log lines:"
      tail -n 40 "$dir/broker.log" >&2
      exit 1
    fi
    if ((SECONDS > deadline)); then
      log "$label not started within ${timeout}s; last log lines:"
      tail -n 40 "$dir/broker.log" >&2
      exit 1
    fi
    sleep 0.5
  done
}

# exited <pid>: every thread of the process is gone (a zombie counts as gone), so its sockets are closed. Neither an
# empty command line nor a zombie main thread is enough: the JVM's other threads still hold its files for a while,
# and a check on those saw the port still accepting right after a SIGKILL.
exited() {
  local stat task
  for task in /proc/"$1"/task/*; do
    stat=$(cat "$task/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    [[ $stat == Z* || $stat == X* ]] || return 1
  done
  return 0
}

# gone <pid> [tries]: waits (0.2 s a try) until the process has exited.
gone() {
  local pid=$1
  for _ in $(seq 1 "${2:-300}"); do
    exited "$pid" && return 0
    sleep 0.2
  done
  return 1
}

# terminate <node dir> <label>: SIGTERM (a clean shutdown), SIGKILL if it does not stop within 30 s.
terminate() {
  local dir=$1 label=$2 pid
  if ! alive "$dir"; then rm -f "$dir/broker.pid"; log "$label not running"; return 0; fi
  pid=$(cat "$dir/broker.pid")
  kill -TERM "$pid" 2>/dev/null || true
  if ! gone "$pid" 150; then log "$label did not stop on SIGTERM; killing"; kill -KILL "$pid" 2>/dev/null || true; gone "$pid"; fi
  rm -f "$dir/broker.pid"
  log "$label stopped"
}

# sigkill <node dir> <label>: an unclean death, as a crash or kill -9 would be; the data stays for the next start.
sigkill() {
  local dir=$1 label=$2 pid
  if ! alive "$dir"; then rm -f "$dir/broker.pid"; log "$label not running"; return 0; fi
  pid=$(cat "$dir/broker.pid")
  kill -KILL "$pid" 2>/dev/null || true
  gone "$pid" || die "$label (pid $pid) survived SIGKILL"
  rm -f "$dir/broker.pid"
  log "$label killed (SIGKILL, pid $pid); its data stays in $dir/data"
}

# Serialise start/stop/kill of one home directory: two callers starting at once must not start two brokers.
lock() {
  mkdir -p "$1"
  exec 9>"$1/.lock"
  flock -w 600 9 || die "could not lock $1/.lock"
}

# ---- the single node ----------------------------------------------------------------------------------------------

write_single_config() {
  local listeners="PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport" advertised="PLAINTEXT://127.0.0.1:$port"
  local protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT" entry name lport aport
  for entry in ${extra_listeners//,/ }; do
    IFS=: read -r name lport aport <<<"$entry"
    [ -n "$name" ] && [ -n "$lport" ] && [ -n "$aport" ] || die "KAFKA_EXTRA_LISTENERS: '$entry' is not NAME:PORT:ADVERTISED_PORT"
    listeners+=",$name://127.0.0.1:$lport"
    advertised+=",$name://127.0.0.1:$aport"
    protocols+=",$name:PLAINTEXT"
  done
  mkdir -p "$home"
  cat >"$home/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protocols
inter.broker.listener.name=PLAINTEXT
log.dirs=$home/data
num.partitions=6
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=6
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
log.retention.hours=24
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
PROPS
  write_log4j "$home"
}

start_single() {
  lock "$home"
  if alive "$home"; then
    wait_started "$home" broker
    log "already running (pid $(cat "$home/broker.pid"))"
    return 0
  fi
  if port_open "$port"; then log "something already listens on 127.0.0.1:$port; using it"; return 0; fi
  fetch
  write_single_config
  format "$home" "$home"
  launch "$home" "$home" "$heap"
  wait_started "$home" broker
  log "started (pid $(cat "$home/broker.pid")) on 127.0.0.1:$port"
}

status_single() {
  if alive "$home"; then echo "running pid=$(cat "$home/broker.pid") port=$port"; return 0; fi
  if port_open "$port"; then echo "external broker on 127.0.0.1:$port"; return 0; fi
  echo "stopped"
  return 1
}

# ---- the cluster --------------------------------------------------------------------------------------------------

node_dir() { echo "$cluster/node$1"; }
node_port() { echo $((cluster_port + 2 * ($1 - 1))); }
node_count() {
  if [ -n "$nodes" ] && [ "$nodes" -gt 1 ]; then echo "$nodes"; return; fi
  [ -f "$cluster/nodes" ] || die "no cluster here ($cluster); start one with: kafka.sh start --nodes 3"
  cat "$cluster/nodes"
}
brokers_of() {
  local n=$1 list="" i
  for i in $(seq 1 "$n"); do list+="${list:+,}127.0.0.1:$(node_port "$i")"; done
  echo "$list"
}

write_node_config() {
  local n=$1 count=$2 dir p cp voters="" i rf isr
  dir=$(node_dir "$n")
  p=$(node_port "$n")
  cp=$((p + 1))
  for i in $(seq 1 "$count"); do voters+="${voters:+,}$i@127.0.0.1:$(($(node_port "$i") + 1))"; done
  rf=$((count < 3 ? count : 3))
  isr=$((rf < 2 ? 1 : 2))
  mkdir -p "$dir"
  # Few threads: several JVMs share this machine's cores.
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$p,CONTROLLER://127.0.0.1:$cp
advertised.listeners=PLAINTEXT://127.0.0.1:$p
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
num.partitions=6
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=6
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
delete.topic.enable=true
unclean.leader.election.enable=false
log.retention.hours=24
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
background.threads=2
log.cleaner.threads=1
num.recovery.threads.per.data.dir=1
PROPS
}

# prepare_node <n> <count>: config written and storage formatted with the cluster's id.
prepare_node() {
  write_node_config "$1" "$2"
  format "$(node_dir "$1")" "$cluster" "$(cat "$cluster/cluster.id")"
}

start_cluster() {
  local count=$nodes n dir
  ((count >= 2 && count <= 9)) || die "--nodes must be between 2 and 9 (or 1 for the single node)"
  lock "$cluster"
  if [ -f "$cluster/nodes" ] && [ "$(cat "$cluster/nodes")" != "$count" ]; then
    die "a cluster of $(cat "$cluster/nodes") nodes lives in $cluster; reset it first: kafka.sh reset --nodes $(cat "$cluster/nodes")"
  fi
  for n in $(seq 1 "$count"); do
    if ! alive "$(node_dir "$n")" && port_open "$(node_port "$n")"; then
      die "127.0.0.1:$(node_port "$n") is taken by another process; choose other ports with KAFKA_CLUSTER_PORT"
    fi
  done
  fetch
  write_log4j "$cluster"
  [ -f "$cluster/cluster.id" ] || random_id >"$cluster/cluster.id"
  echo "$count" >"$cluster/nodes"
  # Every node first: a node reports started only once a quorum of controllers is up.
  for n in $(seq 1 "$count"); do
    dir=$(node_dir "$n")
    alive "$dir" && continue
    prepare_node "$n" "$count"
    launch "$dir" "$cluster" "$cluster_heap"
  done
  for n in $(seq 1 "$count"); do wait_started "$(node_dir "$n")" "node $n"; done
  log "cluster of $count nodes started; brokers $(brokers_of "$count")"
}

start_node() {
  local n=$1 count dir
  count=$(node_count)
  ((n >= 1 && n <= count)) || die "node $n is not in this cluster of $count nodes"
  lock "$cluster"
  dir=$(node_dir "$n")
  if ! alive "$dir"; then
    prepare_node "$n" "$count"
    launch "$dir" "$cluster" "$cluster_heap"
  fi
  wait_started "$dir" "node $n"
  log "node $n started (pid $(cat "$dir/broker.pid")) on 127.0.0.1:$(node_port "$n")"
}

kill_node() {
  local n=$1 count
  count=$(node_count)
  ((n >= 1 && n <= count)) || die "node $n is not in this cluster of $count nodes"
  sigkill "$(node_dir "$n")" "node $n"
}

stop_cluster() {
  local count n
  [ -f "$cluster/nodes" ] || { log "no cluster in $cluster"; return 0; }
  count=$(cat "$cluster/nodes")
  lock "$cluster"
  # In parallel: a node waits for its controller quorum while it shuts down cleanly.
  for n in $(seq 1 "$count"); do terminate "$(node_dir "$n")" "node $n" & done
  wait
}

status_cluster() {
  local count n dir all=0
  if [ ! -f "$cluster/nodes" ]; then echo "cluster: none"; return 1; fi
  count=$(cat "$cluster/nodes")
  for n in $(seq 1 "$count"); do
    dir=$(node_dir "$n")
    if alive "$dir"; then echo "node $n running pid=$(cat "$dir/broker.pid") port=$(node_port "$n")"
    else echo "node $n stopped port=$(node_port "$n")"; all=1; fi
  done
  return $all
}

# ---- command line -------------------------------------------------------------------------------------------------

command=${1:-}
shift || true
nodes=""
args=()
while (($#)); do
  case $1 in
    --nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
    --nodes=*) nodes=${1#--nodes=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -z "$nodes" ] || [[ $nodes =~ ^[0-9]+$ ]] || die "--nodes needs a number"
multi=false
[ -n "$nodes" ] && [ "$nodes" -gt 1 ] && multi=true
arg=${args[0]:-}

case "$command" in
  fetch) fetch ;;
  start) if $multi; then start_cluster; else start_single; fi ;;
  stop) if $multi; then stop_cluster; else lock "$home"; terminate "$home" broker; fi ;;
  status) if $multi; then status_cluster; else status_single; fi ;;
  reset)
    if $multi; then stop_cluster; rm -rf "$cluster"
    else lock "$home"; terminate "$home" broker; rm -rf "$home/data"; fi ;;
  kill) lock "$home"; sigkill "$home" broker ;;
  logs) tail -n "${arg:-100}" "$home/broker.log" ;;
  brokers) if $multi; then brokers_of "$(node_count)"; else echo "127.0.0.1:$port"; fi ;;
  start-node) start_node "${arg:?start-node needs a node number}" ;;
  kill-node) kill_node "${arg:?kill-node needs a node number}" ;;
  logs-node) tail -n "${args[1]:-100}" "$(node_dir "${arg:?logs-node needs a node number}")/broker.log" ;;
  *)
    echo "usage: $0 fetch|start|stop|status|reset|logs|kill|brokers [--nodes N] | start-node N | kill-node N | logs-node N" >&2
    exit 2
    ;;
esac
