/**
 * One-off: how often `checkCompatibility` gives the schema registry's JSON Schema verdict on the registry's own
 * published diff cases. The cases are not in this repository (their license does not allow it): pass the case files
 * (arrays of { description, original_schema, update_schema, compatible }) as arguments.
 *
 *   node --import tsx scripts/json-schema-agreement.ts <cases.json>...
 *
 * A case's `compatible` is the registry's BACKWARD verdict for old = original, new = update; its FORWARD verdict is
 * the same pair read the other way (old = update, new = original), which our levels compute with the same writer →
 * reader step, so one comparison per case gives both. Prints `agree=N/M` and every difference.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { checkCompatibility } from '../src/schema/compat/index.ts';

interface Case {
  description: string;
  original_schema: unknown;
  update_schema: unknown;
  compatible: boolean;
}

// some of the files carry trailing commas (their reader is lenient)
const lenient = (text: string): unknown => JSON.parse(text.replace(/,(\s*[}\]])/g, '$1'));

let agree = 0;
let total = 0;
const differences: string[] = [];
for (const file of process.argv.slice(2)) {
  for (const c of lenient(readFileSync(file, 'utf8')) as Case[]) {
    total++;
    let ours: boolean | string;
    try {
      const result = checkCompatibility({
        format: 'json',
        level: 'BACKWARD',
        old: [c.original_schema],
        next: c.update_schema,
      });
      ours = result.compatible;
      if (ours === c.compatible) agree++;
      else
        differences.push(
          `${basename(file)}: "${c.description}": registry ${c.compatible ? 'compatible' : 'incompatible'}, ours ${ours ? 'compatible' : `incompatible (${result.violations.map((v) => `${v.rule} ${v.path}`).join('; ')})`}`,
        );
    } catch (error) {
      differences.push(`${basename(file)}: "${c.description}": ours threw ${(error as Error).message}`);
    }
  }
}
for (const line of differences) process.stdout.write(`${line}\n`);
process.stdout.write(`agree=${agree}/${total}\n`);
