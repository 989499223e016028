#!/usr/bin/env bash
# The test suite (`npm test` runs it after lint and typecheck) against the real PostgreSQL and a real Kafka broker.
# When KAFKA_BROKERS is unset and no broker answers on 127.0.0.1:${KAFKA_PORT:-9092}, the project's own broker is
# started (scripts/kafka.sh; fetched from Maven Central the first time) and stopped at the end: a test run never skips
# Kafka for want of a broker. A broker that was already up is left as it was.
#   bash scripts/test.sh [test files...]   (default: every test/*/*.test.ts)
# Two test files run at a time (TEST_CONCURRENCY; 1 runs them one by one): most of a file's time is spent waiting for
# the broker, PostgreSQL or a timer, and a file is a process of its own. What that asks of a test is in
# docs/dev/development.md ("Tests side by side").
set -euo pipefail
cd "$(dirname "$0")/.."

port=${KAFKA_PORT:-9092}
if [ -z "${KAFKA_BROKERS:-}" ] && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "test: no Kafka broker on 127.0.0.1:$port, starting the project's own (bash scripts/kafka.sh start)" >&2
  bash scripts/kafka.sh start
  trap 'bash scripts/kafka.sh stop || true' EXIT
fi

if (($# == 0)); then set -- test/*/*.test.ts; fi
node --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-2}" "$@"
