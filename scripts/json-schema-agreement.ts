/**
 * One-off: how often `checkCompatibility` gives the schema registry's JSON Schema verdicts on the registry's own
 * published diff cases. The cases are not in this repository (their license does not allow it): pass the case files
 * (arrays of { description, original_schema, update_schema, compatible }) as arguments.
 *
 *   node --import tsx scripts/json-schema-agreement.ts <cases.json>...
 *
 * A case's `compatible` is the registry's BACKWARD verdict for old = original, new = update, and its FORWARD verdict
 * for the pair the other way round (old = update, new = original): both are computed at their level. FULL needs both
 * directions of one pair: it is counted over the pairs whose reverse is a case too. Prints `agree=N/M` per level and
 * every difference.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { checkCompatibility, type Level } from '../src/schema/compat/index.ts';

interface Case {
  file: string;
  description: string;
  original_schema: unknown;
  update_schema: unknown;
  compatible: boolean;
}

// some of the files carry trailing commas (their reader is lenient)
const lenient = (text: string): unknown => JSON.parse(text.replace(/,(\s*[}\]])/g, '$1'));
const cases = process.argv
  .slice(2)
  .flatMap((file) => (lenient(readFileSync(file, 'utf8')) as Case[]).map((c) => ({ ...c, file: basename(file) })));

const ours = (level: Level, old: unknown, next: unknown): { ok: boolean; why: string } => {
  try {
    const result = checkCompatibility({ format: 'json', level, old: [old], next });
    return { ok: result.compatible, why: result.violations.map((v) => `${v.rule} ${v.path}`).join('; ') };
  } catch (error) {
    return { ok: false, why: `threw ${(error as Error).message}` };
  }
};
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const word = (ok: boolean) => (ok ? 'compatible' : 'incompatible');

const tally = { BACKWARD: [0, 0], FORWARD: [0, 0], FULL: [0, 0] };
const differences: string[] = [];
const count = (level: keyof typeof tally, c: Case, registry: boolean, found: { ok: boolean; why: string }) => {
  tally[level][1]!++;
  if (registry === found.ok) tally[level][0]!++;
  else
    differences.push(
      `${level} ${c.file}: "${c.description}": registry ${word(registry)}, ours ${word(found.ok)}${found.why ? ` (${found.why})` : ''}`,
    );
};
for (const c of cases) {
  count('BACKWARD', c, c.compatible, ours('BACKWARD', c.original_schema, c.update_schema));
  count('FORWARD', c, c.compatible, ours('FORWARD', c.update_schema, c.original_schema));
  const reverse = cases.find(
    (r) => r.file === c.file && same(r.original_schema, c.update_schema) && same(r.update_schema, c.original_schema),
  );
  if (reverse) count('FULL', c, c.compatible && reverse.compatible, ours('FULL', c.original_schema, c.update_schema));
}
for (const line of differences) process.stdout.write(`${line}\n`);
for (const [level, [agree, total]] of Object.entries(tally))
  process.stdout.write(`${level}: agree=${agree}/${total}\n`);
