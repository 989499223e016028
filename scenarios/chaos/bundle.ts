// Start-up work done once per run: the children's code (TypeScript) is bundled into one ES module per role before the
// first spawn, so a restarted child starts with plain `node` — no tsx loader thread, no per-file transform and module
// resolution of the library's ~100 files. Measured on this machine (2 cores, load ~10): spawn to first line of the
// child's code 0.8-1.1 s with tsx, 0.27-0.40 s bundled. Packages stay external (resolved from the checkout's
// node_modules, where the bundles are written); every `import.meta.url` keeps its source file's URL (the SQL files
// are read next to their module). Without esbuild (tsx's bundler) the children run through tsx as before.
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Role } from './children.ts';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export interface ChildEntries {
  /** Node's arguments to start `role`. */
  args(role: Role): string[];
  /** Bundled (plain node) or through tsx. */
  readonly bundled: boolean;
  cleanup(): Promise<void>;
}

export const throughTsx: ChildEntries = {
  args: (role) => ['--import', 'tsx', here(`./${role}.ts`)],
  bundled: false,
  cleanup: async () => undefined,
};

/**
 * Bundles TypeScript entry points (name → file) into one ES module each under node_modules/.cache, to run with plain
 * `node`. Packages stay external; every `import.meta.url` keeps its source file's URL. Returns the directory (files
 * `<name>.mjs`), or throws when esbuild is missing or the build fails.
 */
export async function bundleModules(entryPoints: Record<string, string>, prefix: string): Promise<string> {
  const outdir = here(`../../node_modules/.cache/${prefix}-${randomBytes(4).toString('hex')}`);
  try {
    const { build } = (await import('esbuild')) as typeof import('esbuild');
    await build({
      entryPoints,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir,
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
      plugins: [
        {
          name: 'keep-import-meta-url',
          setup(build) {
            build.onLoad({ filter: /\.ts$/ }, async ({ path }) => ({
              contents: (await readFile(path, 'utf8')).replaceAll(
                'import.meta.url',
                JSON.stringify(pathToFileURL(path).href),
              ),
              loader: 'ts',
            }));
          },
        },
      ],
    });
  } catch (error) {
    await rm(outdir, { recursive: true, force: true });
    throw error;
  }
  return outdir;
}

export async function childEntries(roles: Role[], log: (line: string) => void): Promise<ChildEntries> {
  let outdir: string;
  try {
    outdir = await bundleModules(
      Object.fromEntries(roles.map((role) => [role, here(`./${role}.ts`)])),
      'effectively-chaos',
    );
  } catch (error) {
    log(`chaos: children run through tsx (bundling failed: ${(error as Error).message})`);
    return throughTsx;
  }
  return {
    args: (role) => [`${outdir}/${role}.mjs`],
    bundled: true,
    cleanup: () => rm(outdir, { recursive: true, force: true }),
  };
}
