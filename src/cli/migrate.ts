import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';

/** effectively migrate [--schema s] */
export async function migrateCommand(db: Db, schema: string): Promise<void> {
  const result = await migrate(db, { schema });
  console.log(`migrate: schema=${schema} version=${result.version} applied=${result.applied.join(',') || 'none'}`);
}
