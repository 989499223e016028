import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The project's CLI entry point, as a user runs it. */
export const cli = fileURLToPath(new URL('../../bin/effectively.js', import.meta.url));

/** Runs `effectively <args>` to its end; its exit code and standard output. */
export async function runCli(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args]);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}
