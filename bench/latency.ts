// Latency levers, one at a time, interleaved in one run (the machine is shared: only ratios within a run count).
// node --import tsx bench/latency.ts [seconds per pass, default 3] [rounds, default 2] [relay events, default 20000]
import { randomBytes } from 'node:crypto';
import { migrate } from '../src/db/migrate.ts';
import { pgDb } from '../src/db/pg.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';
import { endToEnd, relaySaturation } from './relay.ts';

interface Lever {
  name: string;
  /** librdkafka properties for the producers and consumers of this pass (each ignores the other's). */
  rdkafka?: Record<string, string | number | boolean>;
  relay?: { pollIntervalMs?: number; listen?: boolean };
  /** Whether the relay's saturated throughput is measured too (the producer's levers can cost it). */
  throughput?: boolean;
}

const levers: Lever[] = [
  { name: 'defaults', throughput: true },
  { name: 'producer linger.ms 0', rdkafka: { 'linger.ms': 0 }, throughput: true },
  { name: 'producer linger.ms 5', rdkafka: { 'linger.ms': 5 }, throughput: true },
  { name: 'consumer fetch.wait.max.ms 5', rdkafka: { 'fetch.wait.max.ms': 5 } },
  { name: 'consumer fetch.wait.max.ms 100', rdkafka: { 'fetch.wait.max.ms': 100 } },
  { name: 'relay without LISTEN, poll 10 ms', relay: { listen: false, pollIntervalMs: 10 } },
];

const seconds = Number(process.argv[2] ?? 3);
const rounds = Number(process.argv[3] ?? 2);
const relayEvents = Number(process.argv[4] ?? 20_000);
const id = randomBytes(3).toString('hex');
const db = pgDb({ max: 10 });
const schema = `bench_lat_${id}`;
await migrate(db, { schema });
const rows: Record<string, { p50: number[]; p99: number[]; hops: string[]; loop: number[]; eps: number[] }> = {};
try {
  for (let round = 0; round < rounds; round++) {
    // Each round starts at another lever: no lever always runs first (after the schema's creation) or last.
    const order = levers.map((_, index) => levers[(index + round) % levers.length]!);
    for (const lever of order) {
      // A quiet transport (a consumer property given to a producer is logged as ignored).
      const transport = kafkaTransport({ clientId: 'bench-lat', rdkafka: lever.rdkafka ?? {}, logger: silentLogger });
      const admin = transport.admin();
      const topic = `bench-lat-${id}-${round}-${levers.indexOf(lever)}`;
      await admin.createTopics([{ topic, partitions: 6 }]);
      const e2e = await endToEnd(db, transport, schema, topic, `${topic}-g`, 1000, seconds, 6, lever.relay);
      rows[lever.name] ??= { p50: [], p99: [], hops: [], loop: [], eps: [] };
      const row = rows[lever.name]!;
      row.p50.push(e2e.p50_ms);
      row.p99.push(e2e.p99_ms);
      row.hops.push(e2e.hops_p99_ms.join('/'));
      row.loop.push(e2e.loop_delay_p99_ms);
      if (lever.throughput) {
        const relayTopic = `${topic}-relay`;
        await admin.createTopics([{ topic: relayTopic, partitions: 6 }]);
        row.eps.push((await relaySaturation(db, transport, schema, relayTopic, relayEvents)).eps);
        await admin.deleteTopics([relayTopic]).catch(() => undefined);
      }
      await admin.deleteTopics([topic]).catch(() => undefined);
      console.log(
        `latency: round ${round} ${lever.name}: p50 ${e2e.p50_ms} p99 ${e2e.p99_ms} hops ${e2e.hops_p99_ms.join('/')} ` +
          `loop ${e2e.loop_delay_p99_ms}${lever.throughput ? ` relay_eps ${row.eps.at(-1)}` : ''}`,
      );
    }
  }
} finally {
  await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  await db.close();
}
console.log('| lever | p50 ms | p99 ms | hops p99 ms | loop delay p99 ms | relay events/s |');
console.log('|---|---|---|---|---|---|');
for (const [name, row] of Object.entries(rows)) {
  const join = (values: (number | string)[]) => values.join(', ');
  console.log(
    `| ${name} | ${join(row.p50)} | ${join(row.p99)} | ${join(row.hops)} | ${join(row.loop)} | ${join(row.eps) || '-'} |`,
  );
}
