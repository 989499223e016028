import { readFileSync } from 'node:fs';
import { assertIdentifier } from './identifiers.ts';

const cache = new Map<string, string>();

/** Reads a `.sql` file that sits next to `moduleUrl` and fills its `:schema` placeholders with a validated name. */
export function loadSql(moduleUrl: string, file: string, schema: string): string {
  const url = new URL(file, moduleUrl);
  let text = cache.get(url.href);
  if (text === undefined) {
    text = readFileSync(url, 'utf8');
    cache.set(url.href, text);
  }
  return text.replaceAll(':schema', assertIdentifier(schema, 'schema'));
}

/** Loads several statements of one component at once, by name. */
export function loadSqlSet<K extends string>(
  moduleUrl: string,
  files: Record<K, string>,
  schema: string,
): Record<K, string> {
  const result = {} as Record<K, string>;
  for (const [name, file] of Object.entries(files) as [K, string][]) result[name] = loadSql(moduleUrl, file, schema);
  return result;
}
