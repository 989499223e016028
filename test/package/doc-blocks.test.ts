// Every ```ts block of README.md and docs/*.md type-checks against the library's types (strict,
// exactOptionalPropertyTypes, NodeNext), as a user's code would. Fragments may use the names of `context()` and of
// `given` as given; a block that cannot compile as written is listed in `skipped` with the reason (keep it short).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * What every fragment may take as given: the library's exports (as if imported; a block's own import wins) and a
 * database, a transport, an outbox, a schema name, an event, a sender.
 */
async function context(): Promise<string> {
  const library = await import('../../src/index.ts');
  const exports = Object.keys(library).map((name) => `declare const ${name}: typeof import('effectively').${name};`);
  return `${exports.join('\n')}
declare const db: import('effectively').Db;
declare const transport: import('effectively').Transport;
declare const outbox: import('effectively').Outbox;
declare const schema: string;
declare const event: import('effectively').Event;
declare const sender: import('effectively').Sender;
`;
}

/** Names a single fragment takes as given, by file and the start of its first line (which identifies it). */
const given: { file: string; firstLine: string; declare: string }[] = [
  {
    file: 'docs/effects.md',
    firstLine: "import { createSender, httpProvider } from 'effectively';",
    declare: 'declare const token: string;',
  },
  {
    file: 'docs/effects.md',
    firstLine:
      "import { backpressureMetrics, consumerLag, createDeadLetterAlerts, pauseWhileOpen } from 'effectively';",
    declare: "declare const notifications: import('effectively').EffectivelyConsumer;",
  },
  {
    file: 'docs/effects.md',
    firstLine: 'const effects = createEffects({ schema });',
    declare:
      "declare const onAlert: (alert: import('effectively').DeadLetterAlert) => void; declare const webhookUrl: string;",
  },
  {
    file: 'docs/relay.md',
    firstLine: 'const relay = createRelay({',
    declare: 'declare function alert(message: string): void;',
  },
  {
    file: 'docs/schema-evolution.md',
    firstLine: "import { encodeEventAs, modeFor } from 'effectively';",
    declare: 'declare const dataSchema: string; declare const bytes: Buffer;',
  },
  {
    file: 'docs/transactions.md',
    firstLine: "import { createPipeline, PermanentError } from 'effectively';",
    declare: 'declare const replicaIndex: number;',
  },
  {
    file: 'docs/schema-evolution.md',
    firstLine: 'const registry = postgresSchemaRegistry({ db });',
    declare: "declare const orderConfirmedV2: import('effectively').SchemaInput; declare const data: unknown;",
  },
];

/** Blocks left out, by file and first line: why each cannot compile as written. */
const skipped: { file: string; firstLine: string; reason: string }[] = [
  // its PrismaClient is generated from the user's own schema
  { file: 'docs/orm.md', firstLine: "import { PrismaPg } from '@prisma/adapter-pg';", reason: 'a generated client' },
];

interface Block {
  file: string;
  line: number;
  code: string;
}

function tsBlocks(file: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]?.trim() !== '```ts') continue;
    const start = index + 1;
    let end = start;
    while (end < lines.length && lines[end]?.trim() !== '```') end++;
    blocks.push({ file, line: start + 1, code: lines.slice(start, end).join('\n') });
    index = end;
  }
  return blocks;
}

function documentedBlocks(): Block[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) => tsBlocks(file, readFileSync(join(root, file), 'utf8')));
}

const firstLine = (block: Block) => block.code.split('\n')[0] ?? '';
const isSkipped = (block: Block) =>
  skipped.some((skip) => skip.file === block.file && firstLine(block).startsWith(skip.firstLine));
const givenFor = (block: Block) =>
  given
    .filter((entry) => entry.file === block.file && firstLine(block).startsWith(entry.firstLine))
    .map((entry) => entry.declare);

test('the skip list and the given names name blocks that exist', () => {
  const blocks = documentedBlocks();
  for (const entry of [...skipped, ...given]) {
    assert.ok(
      blocks.some((block) => block.file === entry.file && firstLine(block).startsWith(entry.firstLine)),
      `${entry.file}: no ts block starts with ${entry.firstLine}`,
    );
  }
});

test('every ts block of the README and docs type-checks', async () => {
  const blocks = documentedBlocks().filter((block) => !isSkipped(block));
  assert.ok(blocks.length > 0);
  const scratch = mkdtempSync(join(tmpdir(), 'effectively-doc-blocks-'));
  try {
    const names = blocks.map((block, index) => {
      const name = `block-${index}.mts`;
      // `export {}` makes each block a module (top-level await, its own names); given names go on its last line, so
      // error lines still point at the block's own lines.
      writeFileSync(join(scratch, name), `${block.code}\nexport {}; ${givenFor(block).join(' ')}\n`);
      return name;
    });
    writeFileSync(join(scratch, 'context.d.ts'), await context());
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
          paths: {
            effectively: [join(root, 'src/index.ts')],
            // the ORM adapters and the ORMs their examples use (dev dependencies here)
            'effectively/*': [join(root, 'src/orm/*.ts')],
            kysely: [join(root, 'node_modules/kysely/dist/esm/index.d.ts')],
            'drizzle-orm/*': [join(root, 'node_modules/drizzle-orm/*/index.d.ts')],
            pg: [join(root, 'node_modules/@types/pg/index.d.ts')],
          },
        },
        files: ['context.d.ts', ...names],
      }),
    );
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const output = await promisify(execFile)(process.execPath, [tsc, '-p', scratch, '--pretty', 'false'])
      .then(() => '')
      .catch((error: { stdout: string }) => error.stdout);
    // Each error pointed back at its Markdown file and line.
    const errors = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const match = /block-(\d+)\.mts\((\d+),(\d+)\): (.*)/.exec(line);
        const block = match ? blocks[Number(match[1])] : undefined;
        return match && block ? `${block.file}:${block.line + Number(match[2]) - 1}: ${match[4]}` : line;
      });
    assert.deepEqual(errors, []);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
