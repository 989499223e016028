#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft) for tests, the chaos run and benchmarks.
# usage: scripts/kafka.sh fetch|start|stop|status|logs
# The broker jars come from Maven Central through scripts/kafka/pom.xml and are cached in .kafka/libs (git-ignored).
# Data and logs live in .kafka/ (override with KAFKA_HOME_DIR). Listens on 127.0.0.1:9092 (controller on :9093).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
home=${KAFKA_HOME_DIR:-$root/.kafka}
libs=$home/libs
data=$home/data
pidfile=$home/broker.pid
logfile=$home/broker.log
props=$home/server.properties
port=${KAFKA_PORT:-9092}
cport=${KAFKA_CONTROLLER_PORT:-9093}
heap=${KAFKA_HEAP:--Xmx512m}

log() { echo "kafka.sh: $*" >&2; }

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

fetch() {
  if [ -f "$libs/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || { log "mvn (Apache Maven) is required to fetch the broker"; exit 1; }
  command -v java >/dev/null || { log "java 17+ is required to run the broker"; exit 1; }
  mkdir -p "$libs"
  log "fetching the broker and its libraries from Maven Central into $libs"
  mvn -q -B -f "$root/scripts/kafka/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" >&2
  touch "$libs/.complete"
}

write_config() {
  mkdir -p "$home"
  cat >"$props" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$data
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
  cat >"$home/log4j2.properties" <<'L4J'
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

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; }

start() {
  if running; then log "already running (pid $(cat "$pidfile"))"; return 0; fi
  if port_open; then log "something already listens on 127.0.0.1:$port; using it"; return 0; fi
  fetch
  write_config
  local cp="$libs/*"
  if [ ! -f "$data/meta.properties" ]; then
    rm -rf "$data"; mkdir -p "$data"
    local cluster
    cluster=$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
    java -cp "$cp" -Dlog4j2.configurationFile="$home/log4j2.properties" \
      kafka.tools.StorageTool format -t "$cluster" -c "$props" >"$home/format.log" 2>&1 \
      || { log "storage format failed:"; cat "$home/format.log" >&2; exit 1; }
  fi
  : >"$logfile"
  # setsid: the broker outlives the shell that started it and is not hit by its job-control signals.
  setsid java $heap -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$home/log4j2.properties" \
    -cp "$cp" kafka.Kafka "$props" >>"$logfile" 2>&1 </dev/null &
  echo $! >"$pidfile"
  local deadline=$((SECONDS + ${KAFKA_START_TIMEOUT:-90}))
  # An open port is not enough: the broker is ready once it logs that it started (unfenced and serving).
  until grep -q "Kafka Server started" "$logfile"; do
    if ! running; then log "broker exited during start; last log lines:"; tail -n 40 "$logfile" >&2; exit 1; fi
    if ((SECONDS > deadline)); then log "broker not started in time; last log lines:"; tail -n 40 "$logfile" >&2; exit 1; fi
    sleep 0.5
  done
  log "started (pid $(cat "$pidfile")) on 127.0.0.1:$port"
}

stop() {
  if ! running; then rm -f "$pidfile"; log "not running"; return 0; fi
  local pid; pid=$(cat "$pidfile")
  kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then log "broker did not stop on SIGTERM; killing"; kill -KILL "$pid"; fi
  rm -f "$pidfile"
  log "stopped"
}

status() {
  if running; then echo "running pid=$(cat "$pidfile") port=$port"; return 0; fi
  if port_open; then echo "external broker on 127.0.0.1:$port"; return 0; fi
  echo "stopped"; return 1
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) status ;;
  reset) stop; rm -rf "$data" ;;
  logs) tail -n "${2:-100}" "$logfile" ;;
  *) echo "usage: $0 fetch|start|stop|status|reset|logs" >&2; exit 2 ;;
esac
