import { readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { EffectivelyError } from '../errors.ts';
import {
  checkCompatibility,
  formats,
  isLevel,
  levels,
  type SchemaFormat,
  validateSchema,
} from '../schema/compat/index.ts';
import { importNames } from '../schema/protobuf/proto-file.ts';

const usage = `usage: effectively schema check --format avro|json|protobuf --level ${levels.join('|')}
                               --old <file>... --new <file>     (old files oldest first; exit 0 compatible, 1 not, 2 usage)
                               (a .proto file's imports are read from its directory)`;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A `.proto` file and the files it imports (from its directory, recursively; the well-known types are built in). */
function protoWithImports(file: string): { schema: string; imports: Record<string, string> } {
  const schema = readFileSync(file, 'utf8');
  const imports: Record<string, string> = {};
  const pending = [schema];
  for (let text = pending.pop(); text !== undefined; text = pending.pop()) {
    for (const name of importNames(text)) {
      if (imports[name] !== undefined) continue;
      imports[name] = readFileSync(join(dirname(file), name), 'utf8');
      pending.push(imports[name]);
    }
  }
  return { schema, imports };
}

/** Reads and validates one schema file; a message for the user instead when it cannot. */
function load(file: string, format: SchemaFormat): { schema: unknown } | { error: string } {
  let schema: unknown;
  try {
    schema = format === 'protobuf' ? protoWithImports(file) : JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return { error: `${file}: ${(error as Error).message}` };
  }
  try {
    validateSchema(format, schema);
  } catch (error) {
    if (error instanceof EffectivelyError) return { error: `${file}: ${error.message} (${error.code})` };
    throw error;
  }
  return { schema };
}

/** Avro for `.avsc`, JSON Schema for `.json`, Protobuf for `.proto`, when --format is not given. */
function formatOf(given: string | undefined, file: string): string | undefined {
  if (given !== undefined) return given;
  return { '.avsc': 'avro', '.json': 'json', '.proto': 'protobuf' }[extname(file)];
}

/** effectively schema check — offline compatibility of a new schema with the old ones; no registry, no database. */
export function schemaCommand(args: string[]): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    console.error(`schema: ${(error as Error).message}\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const old = values.old ?? [];
  const next = values.new;
  if (positionals[0] !== 'check' || positionals.length > 1 || old.length === 0 || next === undefined) {
    console.error(usage);
    return 2;
  }
  const format = formatOf(values.format, next);
  if (!(formats as readonly (string | undefined)[]).includes(format)) {
    console.error(`schema check: --format must be one of ${formats.join(', ')}\n${usage}`);
    return 2;
  }
  const level = values.level.toUpperCase(); // `--level backward` as well as BACKWARD
  if (!isLevel(level)) {
    console.error(`schema check: --level must be one of ${levels.join(', ')} (any case)`);
    return 2;
  }
  const loaded = [...old, next].map((file) => load(file, format as SchemaFormat));
  const schemas: unknown[] = [];
  for (const file of loaded)
    if ('schema' in file) schemas.push(file.schema);
    else console.error(`schema check: ${file.error}`);
  if (schemas.length < loaded.length) return 2;
  const result = checkCompatibility({
    format: format as SchemaFormat,
    level,
    old: schemas.slice(0, -1),
    next: schemas.at(-1),
  });
  for (const v of result.violations)
    console.log(`${v.direction} vs ${basename(old[v.against ?? 0] ?? '')}: ${v.message}`);
  for (const note of result.notes) console.log(`note vs ${basename(old[note.against ?? 0] ?? '')}: ${note.message}`);
  const against =
    result.checked.length === 1
      ? basename(old[result.checked[0] ?? 0] ?? '')
      : plural(result.checked.length, 'old schema');
  console.log(
    result.compatible
      ? `schema check: compatible (level ${level}, ${format}, against ${against})`
      : `schema check: INCOMPATIBLE, ${plural(result.violations.length, 'violation')} (level ${level}, ${format}, against ${against})`,
  );
  return result.compatible ? 0 : 1;
}

function parse(args: string[]) {
  const parsed = parseArgs({
    args,
    allowPositionals: true,
    tokens: true,
    options: {
      format: { type: 'string' },
      level: { type: 'string', default: 'BACKWARD' },
      old: { type: 'string', multiple: true },
      new: { type: 'string' },
    },
  });
  // `--old a.avsc b.avsc` (the usage line's form) as well as repeated `--old`: a positional right after `--old`'s
  // value, before the next option, is one more old file.
  const old = [...(parsed.values.old ?? [])];
  const positionals: string[] = [];
  let afterOld = false;
  for (const token of parsed.tokens) {
    if (token.kind === 'option') afterOld = token.name === 'old';
    else if (token.kind === 'positional') {
      if (afterOld) old.push(token.value);
      else positionals.push(token.value);
    } else afterOld = false;
  }
  return { values: { ...parsed.values, old }, positionals };
}
