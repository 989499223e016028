// The search service: keeps "seats left" per show from `boxoffice.seats`, newest version wins.
import { createConsumer, stderrLogger } from 'effectively';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from '../shared/deps.ts';
import { seatsTopic } from '../shared/events.ts';
import { createTables } from '../shared/sql.ts';
import { applySeats } from './availability.ts';

export { seatsLeft } from './availability.ts';

export async function startSearch(deps: BoxofficeDeps): Promise<RunningService> {
  const { db, schema } = deps;
  await createTables(db, import.meta.url, schema);
  const consumer = createConsumer({
    db,
    transport: deps.transport,
    schema,
    group: groupName(deps, 'search'),
    topics: [seatsTopic],
    retention: dedupRetention,
    logger: deps.logger ?? stderrLogger,
    ...(deps.faults === undefined ? {} : { faults: deps.faults }),
    handler: (event, { tx }) => applySeats(tx, schema, event),
  });
  await consumer.start();
  return { name: 'search', close: () => consumer.close() };
}
