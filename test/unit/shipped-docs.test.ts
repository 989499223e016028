// The docs a package user gets (package.json `files`: docs/*.md) speak of what that user has (issue 28, item 5): no
// path of the repository (src/, test/, scripts/, bench/), which an `npm install` does not bring, and no link to a file
// the package does not ship. Engineers' notes live in docs/dev/, which is not shipped. Cheap: reads files only.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const files: string[] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files;
/** npm ships these whatever `files` says. */
const alwaysShipped = ['README.md', 'LICENSE', 'package.json'];

const shippedDocs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
const isShipped = (path: string) =>
  alwaysShipped.includes(path) || (/^docs\/[^/]+\.md$/.test(path) && shippedDocs.includes(path.slice(5)));

/** Lines of `text` naming a folder of the repository that the package does not ship. */
export function repositoryPaths(text: string): string[] {
  return text
    .split('\n')
    .map((line, n) => ({ line, n: n + 1 }))
    .filter(({ line }) => /(^|[^\w./-])(src|test|scripts|bench)\//.test(line))
    .map(({ line, n }) => `${n}: ${line.trim().slice(0, 120)}`);
}

/** Relative links of a doc in docs/ whose target (from the package's root) is not shipped. */
export function unshippedLinks(text: string): string[] {
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
  return targets
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => ({ target, path: normalize(join('docs', target.split('#')[0]!)).replaceAll('\\', '/') }))
    .filter(({ path }) => !isShipped(path) || !existsSync(join(root, path)))
    .map(({ target }) => target);
}

test('the package ships docs/*.md and nothing else of docs/ (docs/dev/ stays out)', () => {
  assert.deepEqual(
    files.filter((entry) => entry.startsWith('docs')),
    ['docs/*.md'],
  );
  assert.ok(shippedDocs.includes('first-service.md'));
  assert.ok(!shippedDocs.includes('development.md'), "the engineers' notes are in docs/dev/");
});

test('no shipped doc names a path of the repository (src/, test/, scripts/, bench/)', () => {
  const found = shippedDocs.flatMap((name) =>
    repositoryPaths(readFileSync(join(root, 'docs', name), 'utf8')).map((line) => `docs/${name}:${line}`),
  );
  assert.deepEqual(found, []);
});

test('no shipped doc links a file the package does not ship', () => {
  const found = shippedDocs.flatMap((name) =>
    unshippedLinks(readFileSync(join(root, 'docs', name), 'utf8')).map((target) => `docs/${name} -> ${target}`),
  );
  assert.deepEqual(found, []);
});

test('naive twin: the checks see what they guard against', () => {
  assert.deepEqual(repositoryPaths('see `test/integration/x.test.ts`\nrun `bash scripts/kafka.sh start`\nok: dist/x'), [
    '1: see `test/integration/x.test.ts`',
    '2: run `bash scripts/kafka.sh start`',
  ]);
  assert.deepEqual(unshippedLinks('[a](kafka.md#x) [b](dev/development.md) [c](../README.md) [d](../examples/x.ts)'), [
    'dev/development.md',
    '../examples/x.ts',
  ]);
});
