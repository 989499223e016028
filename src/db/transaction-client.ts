/**
 * A node-postgres client's shape over a transaction someone else holds (the consumer's `ctx.tx`), for an ORM to write
 * through: the ORM adapters (`effectively/kysely`, `effectively/drizzle`, `effectively/prisma`) build their query
 * builder on it, so the handler's business rows commit with the dedup row. Two rules keep that transaction whole:
 * - every statement goes through `tx` itself, so a failed statement the handler swallows is seen by the consumer (its
 *   record fails with `EFF_TX_ABORTED`, as with raw SQL);
 * - the ORM's own transaction statements become savepoints (BEGIN: SAVEPOINT, COMMIT: RELEASE, ROLLBACK: ROLLBACK TO),
 *   so `orm.transaction(...)` inside a handler is a nested unit of work and never ends the consumer's transaction.
 * It needs no ORM: the core ships it, each adapter imports it, and the consumer's own `ctx.tx` goes through it too (a
 * handler's raw `BEGIN` / `COMMIT` on `ctx.tx`, from a helper of its codebase, is a savepoint as well).
 */
import { EffectivelyError, ErrorCodes, transactionAborted } from '../errors.ts';
import type { Queryable } from './port.ts';
import { sqlState } from './sqlstate.ts';
import { statementsOf } from './statements.ts';

/** node-postgres' query config (`{ text, values, rowMode, types }`), which ORMs send. */
export interface QueryConfigLike {
  text: string;
  values?: unknown[];
  [option: string]: unknown;
}

export interface PgResultLike {
  command?: string;
  rowCount: number | null;
  rows: unknown[];
  fields?: unknown[];
}

export interface TransactionClient {
  query(textOrConfig: string | QueryConfigLike, values?: unknown[]): Promise<PgResultLike>;
  /** A pool's `release`: nothing to give back, the transaction belongs to its holder. */
  release(error?: unknown): void;
  on(event: string, listener: (...args: unknown[]) => void): TransactionClient;
  removeListener(event: string, listener: (...args: unknown[]) => void): TransactionClient;
}

type Control = 'begin' | 'commit' | 'rollback';

/** Could be a whole-transaction statement: it starts with one of these words. */
const mayControl = /^(begin|start|commit|end|rollback|abort|prepare|set)\b/i;

type Kind = Control | 'begin-with-modes' | 'ends-outer';

/**
 * Reads a whole-transaction statement (one of `statementsOf`'s: trimmed, its comments gone); `undefined` for anything
 * else (a savepoint statement, `ROLLBACK TO`, passes through as is). `ends-outer`: one that would end the transaction
 * it is sent in whatever came before it (`COMMIT AND CHAIN`, `PREPARE TRANSACTION`…), never turned into a savepoint.
 */
function controlOf(text: string): Kind | undefined {
  if (!mayControl.test(text)) return undefined;
  const statement = text.toLowerCase().replace(/\s+/g, ' ');
  if (/^(begin|start transaction)( (work|transaction))?$/.test(statement)) return 'begin';
  // Prisma's adapter asks for an isolation level after its BEGIN: `SET TRANSACTION ISOLATION LEVEL …`
  if (/^(begin|start transaction|set transaction)\b/.test(statement)) return 'begin-with-modes';
  if (/^(commit|end)( (work|transaction))?$/.test(statement)) return 'commit';
  if (/^(rollback|abort)( (work|transaction))?$/.test(statement)) return 'rollback';
  if (/^(rollback|abort)( (work|transaction))? to\b/.test(statement)) return undefined;
  if (/^(commit|end|rollback|abort|prepare transaction)\b/.test(statement)) return 'ends-outer';
  return undefined;
}

/**
 * The query's transaction statement, when it is one; `hidden` when one is among several statements of one query (the
 * simple protocol runs them all, and a savepoint can stand only for a statement sent alone). The text is cut both ways
 * the server may read its strings (`standard_conforming_strings` on, and off: a setting the text does not show), and a
 * transaction statement found either way is hidden.
 */
function kindOf(text: unknown): Kind | 'hidden' | undefined {
  if (typeof text !== 'string') return undefined;
  const standard = statementsOf(text);
  // read as with standard_conforming_strings off too: the two cuts differ only where a backslash is
  const cuts = text.includes('\\') ? [standard, statementsOf(text, { backslashEscapes: true })] : [standard];
  for (const statements of cuts) {
    if (statements.length > 1 && statements.some((statement) => controlOf(statement) !== undefined)) return 'hidden';
  }
  return standard.length === 1 ? controlOf(standard[0]!) : undefined;
}

function refused(statement: string, why: string): EffectivelyError {
  return new EffectivelyError(
    ErrorCodes.EFF_NESTED_TRANSACTION,
    `\`${statement}\` was sent inside a transaction the library holds (the consumer's): ${why}`,
    { details: { operation: 'transaction', statement } },
  );
}

/** A savepoint standing for a BEGIN of the handler's (or its ORM's); `undone` once rolled back to after a failed COMMIT. */
interface Opened {
  name: string;
  undone: boolean;
}

/** The savepoints opened in one transaction, shared by every client made over it (raw `ctx.tx`, each ORM instance). */
interface Savepoints {
  open: Opened[];
  made: number;
}

const savepointsOf = new WeakMap<object, Savepoints>();
/** A client made here → the transaction it wraps: a client over a client shares its savepoints. */
const rootOf = new WeakMap<object, object>();

/** Whether `value` is a client made here, every statement of which runs in the transaction it was made over. */
export function isTransactionClient(value: unknown): boolean {
  return typeof value === 'object' && value !== null && rootOf.has(value);
}

/**
 * How many transactions of the caller's own (BEGINs with no COMMIT or ROLLBACK yet) are open on the transaction `client`
 * was made over, and forgets them: the caller (a handler) is done with it. Not 0 is that caller's bug, its own.
 */
export function abandonedTransactions(client: object): number {
  const state = savepointsOf.get(rootOf.get(client) ?? client);
  if (state === undefined) return 0;
  const abandoned = state.open.filter((opened) => !opened.undone).length;
  state.open.length = 0;
  return abandoned;
}

/**
 * The view of `tx` an ORM writes through. `tx` must come from a node-postgres-backed database (`pgDb`, `pgliteDb`):
 * its `query` also takes node-postgres' query config object, which ORMs use (rows as arrays, their own type parsers).
 * One transaction of the caller's own at a time: nested units of work are savepoints (`SAVEPOINT`, an ORM's nested
 * transaction, `ctx.savepoint`); two at once (`Promise.all` of ORM transactions) would interleave their savepoints on
 * the one connection, and the COMMIT of one would release the other's, whose ROLLBACK would then undo both.
 */
export function transactionClient(tx: Queryable, savepointPrefix = 'effectively_orm'): TransactionClient {
  // node-postgres' `query(config)`: the Queryable port names only `(text, params)`, the client behind it takes both
  const send = tx.query.bind(tx) as unknown as (
    textOrConfig: string | QueryConfigLike,
    values?: unknown[],
  ) => Promise<PgResultLike>;
  const root = rootOf.get(tx) ?? tx;
  const state = savepointsOf.get(root) ?? { open: [], made: 0 };
  savepointsOf.set(root, state);
  const { open } = state;
  const plain = (text: string) => send(text);

  async function begin(statement: string): Promise<PgResultLike> {
    while (open.at(-1)?.undone) open.pop(); // an ORM that sends no ROLLBACK after a failed COMMIT (Prisma)
    if (open.length > 0) {
      throw refused(
        statement,
        'another transaction of yours is open on it: they share its one connection, so they cannot run at once (run them one after the other; nest with savepoints)',
      );
    }
    const name = `${savepointPrefix}_${++state.made}`;
    const opened = { name, undone: false };
    open.push(opened); // at once: a BEGIN sent meanwhile must see it
    try {
      return await plain(`SAVEPOINT ${name}`);
    } catch (error) {
      open.splice(open.indexOf(opened), 1);
      throw error;
    }
  }

  async function control(kind: Control, statement: string): Promise<PgResultLike> {
    if (kind === 'begin') return begin(statement);
    const opened = open.pop();
    if (opened === undefined || (opened.undone && kind === 'commit')) {
      throw refused(statement, 'it would end that transaction; only a BEGIN of your own (a savepoint here) may end');
    }
    const { name } = opened;
    if (kind === 'rollback') {
      if (!opened.undone) await plain(`ROLLBACK TO SAVEPOINT ${name}`);
      return plain(`RELEASE SAVEPOINT ${name}`);
    }
    try {
      return await plain(`RELEASE SAVEPOINT ${name}`);
    } catch (error) {
      // a statement inside failed and was swallowed: undo the nested work, say so (as `ctx.savepoint` does)
      if (sqlState(error) !== '25P02') throw error;
      await plain(`ROLLBACK TO SAVEPOINT ${name}`);
      // kept: the ORM answers a failed COMMIT with its ROLLBACK, which must find it (not be refused, and so replace
      // this error, the one that names the swallowed statement, with EFF_NESTED_TRANSACTION)
      open.push({ name, undone: true });
      throw transactionAborted('a nested ORM transaction', error);
    }
  }

  const client: TransactionClient = {
    async query(textOrConfig, values) {
      const text = typeof textOrConfig === 'string' ? textOrConfig : textOrConfig.text;
      const kind = kindOf(text);
      if (kind === 'hidden') {
        throw refused(
          text,
          'a BEGIN, COMMIT or ROLLBACK among several statements of one query would end or split that transaction (the statements before it committed with the dedup row, those after it outside any transaction); send it as a query of its own',
        );
      }
      if (kind === 'begin-with-modes') {
        throw refused(text, 'a nested transaction is a savepoint, which cannot change isolation level or access mode');
      }
      if (kind === 'ends-outer') throw refused(text, 'it would end that transaction; no savepoint can stand for it');
      if (kind !== undefined) return control(kind, text);
      return send(textOrConfig, values);
    },
    release() {},
    on: () => client,
    removeListener: () => client,
  };
  rootOf.set(client, root);
  return client;
}
