// Private servers that want TLS and a password, with certificates the test makes: a Kafka broker whose client
// listener is SASL_SSL (SCRAM-SHA-256 and OAUTHBEARER) and a PostgreSQL cluster with ssl=on that accepts only TLS
// connections with a SCRAM password. Ports are picked free at start; everything is stopped and deleted afterwards.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './kafka-script.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Certificates {
  /** PEM of the authority that signed the servers' certificate. */
  ca: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A throwaway authority and one server certificate for 127.0.0.1 (and localhost). */
export function makeCertificates(dir: string): Certificates {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=test-ca',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
  return {
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    caFile: join(dir, 'ca.pem'),
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server.key'),
  };
}

export interface SecureBroker {
  brokers: string[];
  /** The broker's own log (searched for secrets too). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * A single-node KRaft broker: clients on SASL_SSL (SCRAM-SHA-256 for `user`, and OAUTHBEARER with the broker's
 * unsecured-token validator), the broker itself on a plaintext listener of its own. About 10 s to start here.
 */
export async function startSecureBroker(
  dir: string,
  certs: Certificates,
  user: { name: string; password: string },
): Promise<SecureBroker> {
  const libs = process.env.KAFKA_LIBS ?? join(root, '.kafka/libs');
  if (!existsSync(libs)) {
    throw new Error(`the broker's jars are not in ${libs}: run \`bash scripts/kafka.sh fetch\` (or set KAFKA_LIBS)`);
  }
  const base = await freePorts(3);
  const [client, internal, controller] = [base, base + 1, base + 2];
  const storePassword = 'keystore-pass';
  execFileSync(
    'openssl',
    [
      'pkcs12',
      '-export',
      '-in',
      certs.certFile,
      '-inkey',
      certs.keyFile,
      '-out',
      'broker.p12',
      '-passout',
      `pass:${storePassword}`,
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const properties = join(dir, 'server.properties');
  writeFileSync(
    properties,
    `process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controller}
controller.listener.names=CONTROLLER
listeners=SASL_SSL://127.0.0.1:${client},INTERNAL://127.0.0.1:${internal},CONTROLLER://127.0.0.1:${controller}
advertised.listeners=SASL_SSL://127.0.0.1:${client},INTERNAL://127.0.0.1:${internal}
listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,SASL_SSL:SASL_SSL
inter.broker.listener.name=INTERNAL
sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";
ssl.keystore.type=PKCS12
ssl.keystore.location=${join(dir, 'broker.p12')}
ssl.keystore.password=${storePassword}
log.dirs=${join(dir, 'data')}
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
`,
  );
  const java = (...args: string[]) => spawnSync('java', ['-cp', `${libs}/*`, ...args], { encoding: 'utf8' });
  const id = java('kafka.tools.StorageTool', 'random-uuid').stdout.trim().split('\n').pop()!;
  const format = java(
    'kafka.tools.StorageTool',
    'format',
    '-t',
    id,
    '-c',
    properties,
    '--add-scram',
    `SCRAM-SHA-256=[name=${user.name},password=${user.password}]`,
  );
  if (format.status !== 0) throw new Error(`storage format failed: ${format.stdout}${format.stderr}`);
  // INFO to the console: the broker says `Kafka Server started` once it serves
  const log4j = join(dir, 'log4j2.properties');
  writeFileSync(
    log4j,
    `appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
`,
  );
  const jvm = [
    '-Xmx384m',
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    `-Dlog4j2.configurationFile=${log4j}`,
    '-cp',
    `${libs}/*`,
  ];
  const broker: ChildProcess = spawn('java', [...jvm, 'kafka.Kafka', properties], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  broker.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  broker.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 90_000;
  while (!output.includes('Kafka Server started')) {
    if (broker.exitCode !== null || Date.now() > deadline) {
      broker.kill('SIGKILL');
      throw new Error(`the secure broker did not start:\n${output.slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    brokers: [`127.0.0.1:${client}`],
    log: () => output,
    async stop() {
      if (broker.exitCode !== null) return;
      const exited = new Promise((resolve) => broker.once('exit', resolve));
      broker.kill('SIGTERM');
      const timer = setTimeout(() => broker.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface SecurePostgres {
  /** Host and port only: give user, password and TLS settings yourself. */
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/**
 * A private cluster (scripts/postgres.sh) with ssl=on whose only door is TLS plus a SCRAM password for `user`
 * (`hostssl ... scram-sha-256`; plain TCP and other users are refused). About 3 s to start here.
 */
export async function startSecurePostgres(
  certs: Certificates,
  user: { name: string; password: string },
): Promise<SecurePostgres> {
  // postgres.sh runs the server as `postgres`, which must reach the directory: one of its own under /tmp
  const home = mkdtempSync(join(tmpdir(), 'effectively-pg-tls-'));
  chmodSync(home, 0o755);
  const port = await freePorts(1);
  const env = { ...process.env, PG_HOME_DIR: home, PG_PRIVATE_PORT: String(port) };
  const script = (command: string) =>
    execFileSync('bash', [join(root, 'scripts/postgres.sh'), command], { env, stdio: 'pipe' });
  script('start');
  const data = join(home, 'data');
  const asRoot = process.getuid?.() === 0;
  for (const [from, name] of [
    [certs.certFile, 'server.crt'],
    [certs.keyFile, 'server.key'],
  ] as const) {
    writeFileSync(join(data, name), readFileSync(from));
    chmodSync(join(data, name), 0o600);
    if (asRoot) {
      const owner = execFileSync('stat', ['-c', '%u:%g', data], { encoding: 'utf8' }).trim().split(':').map(Number);
      chownSync(join(data, name), owner[0]!, owner[1]!);
    }
  }
  const psql = (sql: string) =>
    execFileSync(
      'psql',
      ['-h', home, '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c', sql],
      {
        stdio: 'pipe',
      },
    );
  psql(`CREATE ROLE ${user.name} LOGIN PASSWORD '${user.password}' CREATEDB`);
  psql(`CREATE DATABASE ${user.name} OWNER ${user.name}`);
  writeFileSync(
    join(data, 'postgresql.conf'),
    `${readFileSync(join(data, 'postgresql.conf'), 'utf8')}
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
password_encryption = 'scram-sha-256'
`,
  );
  writeFileSync(
    join(data, 'pg_hba.conf'),
    `local all postgres trust
hostssl all ${user.name} 127.0.0.1/32 scram-sha-256
`,
  );
  script('restart');
  return {
    port,
    log: () => readFileSync(join(home, 'server.log'), 'utf8'),
    async stop() {
      script('stop');
      rmSync(home, { recursive: true, force: true });
    },
  };
}
