// The ORMs are optional peer dependencies: only their adapters (`effectively/kysely`, `/drizzle`, `/prisma`, the files
// of src/orm/) import them. Everything the main entry and the command line reach must load without them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const orms = /^(kysely|drizzle-orm|prisma|@prisma\/)/;

/** Every module `entry` reaches through static and dynamic imports, and the packages they import by name. */
function reach(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*'([^']+)'/g)) {
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!));
      else packages.add(specifier!);
    }
  };
  visit(entry);
  return { files, packages };
}

test('the main entry and the CLI import no ORM; the adapters each import theirs', () => {
  for (const entry of ['index.ts', 'cli/main.ts']) {
    const { files, packages } = reach(join(src, entry));
    assert.ok(files.size > 50, `${entry} reaches the library (${files.size} modules)`);
    assert.deepEqual(
      [...packages].filter((name) => orms.test(name)),
      [],
      `${entry} imports an ORM`,
    );
    assert.deepEqual(
      [...files].filter((file) => file.startsWith(join(src, 'orm'))),
      [],
      `${entry} reaches an adapter`,
    );
  }
  const imported = (adapter: string) => [...reach(join(src, `orm/${adapter}.ts`)).packages].filter((p) => orms.test(p));
  assert.deepEqual(imported('kysely'), ['kysely']);
  assert.deepEqual(imported('drizzle'), ['drizzle-orm', 'drizzle-orm/node-postgres']);
  assert.deepEqual(imported('prisma'), ['@prisma/adapter-pg']);
});

test('package.json exports each adapter and keeps its ORM an optional peer dependency', () => {
  const pkg = JSON.parse(readFileSync(join(src, '../package.json'), 'utf8'));
  for (const [path, orm] of [
    ['./kysely', 'kysely'],
    ['./drizzle', 'drizzle-orm'],
    ['./prisma', '@prisma/adapter-pg'],
  ] as const) {
    assert.equal(pkg.exports[path].import, `./dist/orm/${path.slice(2)}.js`);
    assert.ok(pkg.peerDependencies[orm], `${orm} is a peer dependency`);
    assert.equal(pkg.peerDependenciesMeta[orm]?.optional, true, `${orm} is optional`);
    assert.equal(pkg.dependencies[orm], undefined, `${orm} is not a dependency`);
  }
});
