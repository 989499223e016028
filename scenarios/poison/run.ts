// One run of the poison scenario: a partition whose head (and a few later records) cannot be applied until a fix is
// deployed, next to healthy partitions that must not wait for it; then the fix, a redrive interrupted once, and the
// audit.
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent, type Event } from '../../src/envelope/event.ts';
import { PermanentError, TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import type { Producer, Transport } from '../../src/transport/port.ts';

/** What an order event asks of the handler: `bad-seat` and `down` fail until the fix; `flaky` fails twice, then passes. */
type Kind = 'ok' | 'bad-seat' | 'down' | 'flaky';

export interface PoisonOptions {
  db: Db;
  transport: Transport;
  schema: string;
  topic: string;
  events: number;
  partitions: number;
  /** Events that fail until the fix (half permanent, half transient beyond the attempts). */
  poison: number;
  /** `stop-on-poison` is the naive twin: no dead letters, a record that keeps failing stops its partition. */
  mode?: 'effectively' | 'stop-on-poison';
  /**
   * After the redrive, the source publishes the dead events once more, same ids (an upstream replay after the fix): only
   * the consumer's dedup rows keep them from being applied twice. Where the log lives in the consumer's database
   * (embedded) the redrive sends and marks in one commit, so its crash sends nothing twice: this is the copy there.
   */
  replayDead?: boolean;
  /** How long every event may take to be applied or dead before the run counts the rest as lost (default 120 s). */
  settleMs?: number;
  log: (line: string) => void;
}

export interface PoisonResult {
  events: number;
  applied: number;
  dead: number;
  redriven: number;
  duplicated: number;
  lost: number;
  /** The longest a healthy partition waited between two applied records (see `longestWait`). */
  blockedMs: number;
  /** The longest a failing record paused its partition between two of its attempts, before the fix. */
  heldMs: number;
  /** The injected crash between the redrive's send and its mark happened. */
  redriveCrashed: boolean;
  /** Records sent twice: by the redrive (sent in a commit of their own, then sent again after its crash) or a replay. */
  resent: number;
  poisonedPartition: number;
  recoveredTransient: number;
}

const poisonKey = 'order-poison';

function plan(events: number, poison: number): Kind[] {
  // The first event is poison: it sits at the head of its partition. The others are spread through the run.
  const kinds: Kind[] = Array.from({ length: events }, () => 'ok');
  const spread = Math.max(1, Math.floor(events / (poison + 4)));
  for (let i = 0; i < poison; i++) kinds[i * spread] = i % 2 === 0 ? 'bad-seat' : 'down';
  for (let i = 0; i < 4; i++) kinds[(poison + i) * spread] = 'flaky';
  return kinds;
}

/**
 * The longest a healthy partition waited between two applied records, counted from the first record applied anywhere
 * (the consumer's start-up is nobody's fault). Conservative: batches are applied one at a time, so this includes the
 * ordinary wait for other partitions' batches (the Kafka client hands out a partition's prefetched backlog before the
 * next partition's), the poisoned one's among them; the failures themselves only pause their own partition.
 */
function longestWait(appliedAt: Map<number, number[]>, healthy: number[]): number {
  const first = Math.min(...[...appliedAt.values()].map((times) => times[0] ?? Number.POSITIVE_INFINITY));
  let longest = 0;
  for (const partition of healthy) {
    let previous = first;
    for (const at of appliedAt.get(partition) ?? []) {
      longest = Math.max(longest, at - previous);
      previous = at;
    }
  }
  return longest;
}

export async function runPoison(options: PoisonOptions): Promise<PoisonResult> {
  const { db, transport, schema, topic, log } = options;
  const group = `${schema}-tickets`;
  await migrate(db, { schema });
  await db.query(`CREATE TABLE IF NOT EXISTS ${schema}.tickets_applied (
    event_id uuid NOT NULL, partition integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: options.partitions }]);
  await admin.close();

  const kinds = plan(options.events, options.poison);
  const events: Event[] = kinds.map((kind, i) =>
    createEvent({
      topic,
      type: 'TicketOrdered',
      source: '/boxoffice',
      key: kind === 'ok' ? `order-${i}` : poisonKey,
      data: { order: i, kind },
    }),
  );
  const producer = transport.producer({ clientId: 'poison-scenario' });
  for (let i = 0; i < events.length; i += 500) await producer.send(events.slice(i, i + 500).map(encodeEvent));

  let fixed = false;
  const flakyFailures = new Map<string, number>();
  const partitionOf = new Map<string, number>();
  const appliedAt = new Map<number, number[]>();
  const poisonedPartitions = new Set<number>();
  /** Per failing event: its last attempt before the fix, in ms; and the longest pause between two attempts. */
  const lastAttemptAt = new Map<string, number>();
  let heldMs = 0;
  let recoveredTransient = 0;
  let copiesHandled = 0;
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    logger: silentLogger,
    maxAttempts: 3,
    // Smaller batches than the default 500: batches are applied one at a time, so a healthy partition's wait for the
    // others' batches (poisoned or not) is shorter.
    maxBatchSize: 100,
    deadLetters: options.mode !== 'stop-on-poison',
    // A failing record's pauses (at least 1 s) stay well above a healthy partition's longest gap between two batches,
    // which a loaded machine stretches (1.1 s seen beside another test, against a 0.9 s pause with 500 ms here).
    retry: { baseMs: 1000, capMs: 3000 },
    handler: async (event, { tx, record }) => {
      const { kind } = event.data as { kind: Kind };
      if (kind !== 'ok') poisonedPartitions.add(record.partition);
      if (kind !== 'ok' && !fixed) {
        heldMs = Math.max(heldMs, Date.now() - (lastAttemptAt.get(event.id) ?? Date.now()));
        lastAttemptAt.set(event.id, Date.now());
      }
      if (!fixed && kind === 'bad-seat') throw new PermanentError('unknown seat category "VIP-Z"');
      if (!fixed && kind === 'down') throw new TransientError('seat map service unavailable');
      if (kind === 'flaky') {
        const failures = flakyFailures.get(event.id) ?? 0;
        if (failures < 2) {
          flakyFailures.set(event.id, failures + 1);
          throw new TransientError('could not serialize access (40001)');
        }
      }
      partitionOf.set(event.id, record.partition);
      await tx.query(`INSERT INTO ${schema}.tickets_applied (event_id, partition) VALUES ($1, $2)`, [
        event.id,
        record.partition,
      ]);
    },
    onOutcome: (event, outcome) => {
      const { kind } = event.data as { kind: Kind };
      // Every copy of a dead event after the fix has an outcome (applied, or duplicate when dedup caught it).
      if (fixed && (kind === 'bad-seat' || kind === 'down')) copiesHandled += 1;
      if (outcome !== 'applied') return;
      const partition = partitionOf.get(event.id)!;
      const times = appliedAt.get(partition) ?? [];
      times.push(Date.now());
      appliedAt.set(partition, times);
      if ((event.data as { kind: Kind }).kind === 'flaky') recoveredTransient += 1;
    },
  });
  const store = deadLetterStore({ schema });
  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql)).rows[0]!.n);
  const distinctApplied = () => count(`SELECT count(DISTINCT event_id) AS n FROM ${schema}.tickets_applied`);
  const deadCount = () => count(`SELECT count(*) AS n FROM ${schema}.dead_letters WHERE consumer = '${group}'`);

  const startedAt = Date.now();
  await consumer.start();
  try {
    // Phase 1: every event is applied or dead (or the time is up: what is neither is stuck behind a poison record).
    const settleBy = startedAt + (options.settleMs ?? 120_000);
    while ((await distinctApplied()) + (await deadCount()) < options.events && Date.now() < settleBy) await sleep(50);
    const applied = await distinctApplied();
    const dead = await deadCount();
    const healthy = Array.from({ length: options.partitions }, (_, p) => p).filter((p) => !poisonedPartitions.has(p));
    const blockedMs = longestWait(appliedAt, healthy);
    log(
      `poison: before the fix applied=${applied} dead=${dead} (A+D=${applied + dead} of ${options.events}), ` +
        `poisoned partition(s) ${[...poisonedPartitions].join(',')}, healthy ${healthy.join(',')} waited at most ${blockedMs} ms ` +
        `(a failing record paused its own for up to ${heldMs} ms)`,
    );

    if (applied + dead < options.events) {
      log(`poison: ${options.events - applied - dead} events neither applied nor dead: stuck behind the poison`);
      const nothing = { redriven: 0, duplicated: 0, recoveredTransient, poisonedPartition: -1 };
      const noRedrive = { redriveCrashed: false, resent: 0 };
      return {
        ...nothing,
        ...noRedrive,
        events: options.events,
        applied,
        dead,
        lost: options.events - applied,
        blockedMs,
        heldMs,
      };
    }

    // Phase 2: the fix is deployed; the redrive crashes once after sending its first chunk, then runs again.
    fixed = true;
    const crashOnce = { armed: true };
    // The redrive's producer, counting what it sends in commits of its own (a send within the redrive's transaction is
    // undone with it by the crash).
    let sentApart = 0;
    const redriver: Producer = {
      connect: () => producer.connect(),
      send: async (records) => {
        await producer.send(records);
        sentApart += records.length;
      },
      ...(producer.sendWithin ? { sendWithin: producer.sendWithin.bind(producer) } : {}),
      ...(producer.usesDb ? { usesDb: producer.usesDb.bind(producer) } : {}),
      close: async () => undefined,
    };
    const chunkSize = Math.max(1, Math.ceil(dead / 3));
    try {
      await store.redrive(
        db,
        redriver,
        { consumer: group },
        {
          chunkSize,
          faults: (point) => {
            if (point === 'redrive:after-send' && crashOnce.armed) {
              crashOnce.armed = false;
              throw new Error('redrive crashed after the send, before the mark');
            }
          },
        },
      );
    } catch (error) {
      log(`poison: ${(error as Error).message}; running the redrive again resumes it`);
    }
    await store.redrive(db, redriver, { consumer: group }, { chunkSize });
    const redrivenRows = await count(
      `SELECT count(*) AS n FROM ${schema}.dead_letters WHERE consumer = '${group}' AND status = 'redriven'`,
    );
    // Every copy sent is waited for (its outcome is known), so a duplicate applied would be counted.
    const deadline = Date.now() + 60_000;
    const handled = async (copies: number) => {
      while (copiesHandled < copies && Date.now() < deadline) await sleep(50);
    };
    await handled(Math.max(sentApart, redrivenRows));
    // The replay comes after the redriven copies were handled: the dedup rows catch it, not the range's own check.
    const replayed = options.replayDead ? events.filter((_, i) => kinds[i] === 'bad-seat' || kinds[i] === 'down') : [];
    if (replayed.length > 0) await producer.send(replayed.map(encodeEvent));
    await handled(Math.max(sentApart, redrivenRows) + replayed.length);
    while ((await distinctApplied()) < options.events && Date.now() < deadline) await sleep(50);
    const total = await count(`SELECT count(*) AS n FROM ${schema}.tickets_applied`);
    const distinct = await distinctApplied();
    return {
      events: options.events,
      applied,
      dead,
      redriven: redrivenRows,
      duplicated: total - distinct,
      lost: options.events - distinct,
      blockedMs,
      heldMs,
      redriveCrashed: !crashOnce.armed,
      resent: Math.max(0, sentApart - redrivenRows) + replayed.length,
      poisonedPartition: [...poisonedPartitions][0] ?? -1,
      recoveredTransient,
    };
  } finally {
    await consumer.close();
    await producer.close();
  }
}
