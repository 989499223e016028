// One replication connection (`replication: 'database'`) over node-postgres: the commands of the walsender protocol
// the WAL relay needs, and the CopyBoth stream of START_REPLICATION read from the connection's CopyData messages.
// node-postgres parses those messages but has no streaming helper; this file is that helper, and nothing more.
import pg from 'pg';
import { decodeStream, formatLsn, type Lsn, parseLsn, type StreamMessage, statusUpdate } from './pgoutput.ts';

export interface CreatedSlot {
  consistentPoint: Lsn;
  /** An exported snapshot: valid until this connection runs its next command. */
  snapshot: string;
}

export interface ReplicationConnection {
  createSlot(slot: string): Promise<CreatedSlot>;
  /**
   * Streams the slot's changes from its confirmed position; `onMessage` is called for each message in order. Resolves
   * when the server ends the stream, rejects with the server's error (slot in use, invalidated...).
   */
  stream(slot: string, publication: string, onMessage: (message: StreamMessage) => void, from?: Lsn): Promise<void>;
  /** Tells the server everything up to `lsn` is done with: the slot's confirmed position moves there. */
  confirm(lsn: Lsn): void;
  /** Stops reading the socket (the server then waits) or reads again: backpressure. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

const quote = (name: string) => pg.escapeIdentifier(name);

export async function openReplication(
  config: pg.ClientConfig,
  onError: (error: Error) => void,
): Promise<ReplicationConnection> {
  const client = new pg.Client({ ...config, replication: 'database' } as pg.ClientConfig);
  client.on('error', onError);
  await client.connect();
  // node-postgres' Connection: the parsed protocol messages and the socket (not in its type declarations).
  const connection = (client as unknown as { connection: ReplicationSocket }).connection;
  let ended = false;
  return {
    async createSlot(slot) {
      const { rows } = await client.query<{ consistent_point: string; snapshot_name: string }>(
        `CREATE_REPLICATION_SLOT ${quote(slot)} LOGICAL pgoutput EXPORT_SNAPSHOT`,
      );
      const row = rows[0]!;
      return { consistentPoint: parseLsn(row.consistent_point), snapshot: row.snapshot_name };
    },
    stream(slot, publication, onMessage, from = 0n) {
      const onCopyData = (message: { chunk: Buffer }) => {
        const decoded = decodeStream(message.chunk);
        if (decoded) onMessage(decoded);
      };
      connection.on('copyData', onCopyData);
      const options = `proto_version '1', publication_names ${pg.escapeLiteral(publication)}, binary 'true'`;
      return client
        .query(`START_REPLICATION SLOT ${quote(slot)} LOGICAL ${formatLsn(from)} (${options})`)
        .then(() => undefined)
        .finally(() => connection.off('copyData', onCopyData));
    },
    confirm(lsn) {
      if (!ended) connection.sendCopyFromChunk(statusUpdate(lsn));
    },
    pause: () => connection.stream.pause(),
    resume: () => connection.stream.resume(),
    async close() {
      ended = true;
      await client.end().catch(() => undefined);
    },
  };
}

interface ReplicationSocket {
  on(event: 'copyData', listener: (message: { chunk: Buffer }) => void): void;
  off(event: 'copyData', listener: (message: { chunk: Buffer }) => void): void;
  sendCopyFromChunk(chunk: Buffer): void;
  stream: { pause(): void; resume(): void };
}
