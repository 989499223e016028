#!/usr/bin/env node
// The CLI entry. Installed from the package it runs the compiled dist/ with no TypeScript loader. In a checkout of the
// repository (src/ is not shipped in the package) it runs the sources through tsx, a devDependency, so a development
// run never uses a stale build.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
