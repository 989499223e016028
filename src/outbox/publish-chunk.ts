import { classifySendFailure } from './refusal.ts';

export interface ChunkRow {
  seq: string;
  key: string;
}

export interface ChunkDeps<Row extends ChunkRow> {
  /** Sends rows in the order given; rejects when any of them failed (the client does not say which). */
  send(rows: readonly Row[]): Promise<void>;
  /** Sets one row aside as refused for good (in the pass's transaction). */
  refuse(row: Row, code: string, error: unknown): Promise<void>;
  /** Keys with a row set aside in this pass: none of their later rows may be sent (they would overtake it). */
  blocked: Set<string>;
}

/**
 * Publishes one chunk and returns the rows the broker acknowledged. A send the transport refused for good is split in
 * halves, sent in order, down to the one row that is refused on its own: that row is set aside and its key blocked,
 * so the rest of the chunk flows and no later row of that key goes out ahead of it. A refusal that only a whole batch
 * earns (Kafka's RECORD_LIST_TOO_LARGE, a batch over the topic's size) ends in halves that pass. Any other failure is
 * thrown: the pass rolls back and is retried as it was (a broker that is down sets nothing aside).
 */
export async function publishChunk<Row extends ChunkRow>(rows: readonly Row[], deps: ChunkDeps<Row>): Promise<Row[]> {
  const open = rows.filter((row) => !deps.blocked.has(row.key));
  if (open.length === 0) return [];
  try {
    await deps.send(open);
    return open;
  } catch (error) {
    const { failure, code } = classifySendFailure(error);
    if (failure !== 'refused') throw error;
    if (open.length === 1) {
      const [row] = open as [Row];
      deps.blocked.add(row.key);
      await deps.refuse(row, code, error);
      return [];
    }
    const middle = Math.ceil(open.length / 2);
    const left = await publishChunk(open.slice(0, middle), deps);
    const right = await publishChunk(open.slice(middle), deps);
    return [...left, ...right];
  }
}
