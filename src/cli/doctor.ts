// effectively doctor: is this setup healthy? One line per finding (ok / warn / fail / skip), exit 0 when healthy and 1
// when not. It only reads: nothing is changed, created or deleted.
import { librarySchema } from '../db/identifiers.ts';
import type { Db } from '../db/port.ts';
import { defaultBrokers } from '../transport/kafka/config.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';
import { postgresTransport } from '../transport/postgres/transport.ts';
import { checkMigrations, checkPostgres, oneLine } from './doctor/database.ts';
import { type Finding, finding, findingLine, healthy } from './doctor/finding.ts';
import { consumerGroups, embeddedTopics, type GroupRetention, list } from './doctor/groups.ts';
import { checkDeadLetterPartitions, checkRetention, committedTopics, kafkaAdmin } from './doctor/kafka.ts';
import { checkLag } from './doctor/lag.ts';
import { checkLeases } from './doctor/leases.ts';
import { checkOutboxAge, checkOutboxRefused } from './doctor/outbox.ts';
import { checkWalSlot } from './doctor/wal-slot.ts';
import { durationMs } from './effects.ts';
import { consoleOutput, type Output } from './output.ts';
import { commandUsage } from './usage.ts';

export interface DoctorArgs {
  schema: string;
  /** Consumer groups to look at, comma-separated (default: every group that declared itself in the schema). */
  consumer?: string | undefined;
  /** Topics to look at, comma-separated (default: the topics each group committed offsets on). */
  topic?: string | undefined;
  /** `kafka` (default: the brokers of KAFKA_BROKERS) or `postgres` (the embedded log in the same database). */
  transport?: string | undefined;
  /** A group's lag (records) above which it is a warning (default 10000). */
  maxLag?: string | undefined;
  /** How long the oldest outbox row, or an expired embedded lease, may wait before it is a warning (default 5m). */
  stuckAfter?: string | undefined;
  json: boolean;
}

interface Settings {
  schema: string;
  groups: string[] | undefined;
  topics: string[] | undefined;
  maxLag: number;
  stuckAfterMs: number;
}

/** A check that throws is a failure of that check, said in one line; the other checks still run. */
async function guarded(check: string, run: () => Promise<Finding | Finding[]>): Promise<Finding[]> {
  try {
    return [await run()].flat();
  } catch (error) {
    return [finding('fail', check, `could not check: ${oneLine(error)}`)];
  }
}

/** How long the brokers may take to answer the doctor's first request. */
const brokerTimeoutMs = 3000;

async function kafkaChecks(_db: Db, settings: Settings, groups: GroupRetention[]): Promise<Finding[]> {
  const brokers = defaultBrokers();
  let admin: Awaited<ReturnType<typeof kafkaAdmin>> | undefined;
  const reached = await guarded('kafka', async () => {
    admin = await kafkaAdmin(brokers, brokerTimeoutMs);
    const topics = await admin.listTopics({ timeout: brokerTimeoutMs });
    return finding('ok', 'kafka', `reachable at ${brokers.join(',')} (${topics.length} topics)`);
  });
  if (reached[0]?.level !== 'ok' || !admin) {
    await admin?.disconnect().catch(() => undefined);
    return reached.map((f) => ({
      ...f,
      fix: `check KAFKA_BROKERS (${brokers.join(',')}) and that the brokers are up`,
    }));
  }
  const client = admin;
  const transportAdmin = kafkaTransport({ brokers, clientId: 'effectively-doctor' }).admin();
  try {
    const readers = new Map<string, GroupRetention[]>();
    const topicsOf = new Map<string, string[]>();
    const findings = [...reached];
    for (const group of groups) {
      const found = await guarded('groups', async () => {
        topicsOf.set(group.name, settings.topics ?? (await committedTopics(client, group.name)));
        return [];
      });
      findings.push(...found.map((f) => ({ ...f, what: `group ${group.name}: its topics, ${f.what}` })));
      for (const topic of topicsOf.get(group.name) ?? []) readers.set(topic, [...(readers.get(topic) ?? []), group]);
    }
    for (const topic of settings.topics ?? []) if (!readers.has(topic)) readers.set(topic, []);
    findings.push(
      ...(await guarded('retention', () => checkRetention(brokers[0]!, readers))),
      ...(await guarded('dlt', () => checkDeadLetterPartitions(client, [...readers.keys()]))),
    );
    for (const group of groups)
      findings.push(
        ...(await guarded('lag', () =>
          checkLag(transportAdmin, group.name, topicsOf.get(group.name) ?? [], settings.maxLag),
        )),
      );
    return findings;
  } finally {
    await transportAdmin.close();
    await client.disconnect().catch(() => undefined);
  }
}

async function embeddedChecks(db: Db, settings: Settings, groups: GroupRetention[]): Promise<Finding[]> {
  const admin = postgresTransport({ db, schema: settings.schema }).admin();
  const findings: Finding[] = [];
  for (const group of groups) {
    const topics = settings.topics ?? (await embeddedTopics(db, settings.schema, group.name));
    findings.push(...(await guarded('lag', () => checkLag(admin, group.name, topics, settings.maxLag))));
  }
  return findings;
}

/** Every check, in order; the database's first, and nothing else when it cannot be used. */
export async function doctorFindings(db: Db, settings: Settings, transport: string): Promise<Finding[]> {
  const findings = [await checkPostgres(db)];
  if (findings[0]!.level === 'fail') return findings;
  findings.push(...(await guarded('migrations', () => checkMigrations(db, settings.schema))));
  if (findings[1]!.level === 'fail') return findings;
  const { schema, stuckAfterMs } = settings;
  findings.push(...(await guarded('outbox', () => checkOutboxAge(db, schema, stuckAfterMs))));
  findings.push(...(await guarded('outbox-refused', () => checkOutboxRefused(db, schema))));
  findings.push(...(await guarded('wal-slot', () => checkWalSlot(db, schema))));
  findings.push(...(await guarded('leases', () => checkLeases(db, schema, stuckAfterMs))));
  const groups = await consumerGroups(db, schema, settings.groups);
  const unknown = settings.groups?.filter((name) => !groups.some((group) => group.name === name)) ?? [];
  if (unknown.length > 0)
    findings.push(
      finding(
        'warn',
        'groups',
        `no consumer group ${unknown.join(', ')} declared in schema ${schema}`,
        'check the name and --schema; a consumer declares its group when it starts',
      ),
    );
  else if (groups.length === 0)
    findings.push(finding('skip', 'groups', 'no consumer group declared in this schema (a consumer does at start)'));
  findings.push(...(await (transport === 'postgres' ? embeddedChecks : kafkaChecks)(db, settings, groups)));
  return findings;
}

/** effectively doctor: prints the findings (or `--json`), resolves to 0 when healthy, 1 when not, 2 on bad usage. */
export async function doctorCommand(db: Db, args: DoctorArgs, output: Output = consoleOutput): Promise<number> {
  const maxLag = args.maxLag === undefined ? 10_000 : Number(args.maxLag);
  const transport = args.transport ?? 'kafka';
  const stuckAfterMs = args.stuckAfter === undefined ? 300_000 : durationMs(args.stuckAfter);
  if (
    !Number.isSafeInteger(maxLag) ||
    maxLag < 0 ||
    stuckAfterMs === undefined ||
    !['kafka', 'postgres'].includes(transport)
  ) {
    output.error(`usage: effectively\n${commandUsage.doctor}`);
    return 2;
  }
  const settings = {
    schema: librarySchema(args.schema),
    groups: list(args.consumer),
    topics: list(args.topic),
    maxLag,
    stuckAfterMs,
  };
  const findings = await doctorFindings(db, settings, transport);
  const ok = healthy(findings);
  if (args.json) output.log(JSON.stringify({ healthy: ok, findings }));
  else {
    for (const f of findings) output.log(findingLine(f));
    const count = (level: string) => findings.filter((f) => f.level === level).length;
    output.log(ok ? 'doctor: healthy' : `doctor: not healthy (${count('fail')} fail, ${count('warn')} warn)`);
  }
  return ok ? 0 : 1;
}
