import { migrate } from '../db/migrate.ts';
import type { Db } from '../db/port.ts';
import { consoleOutput, type Output } from './output.ts';

/** effectively migrate [--schema s] */
export async function migrateCommand(db: Db, schema: string, output: Output = consoleOutput): Promise<number> {
  const result = await migrate(db, { schema });
  output.log(`migrate: schema=${schema} version=${result.version} applied=${result.applied.join(',') || 'none'}`);
  return 0;
}
