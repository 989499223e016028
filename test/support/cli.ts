import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';

/** The project's CLI entry point, as a user runs it. */
export const cli = fileURLToPath(new URL('../../bin/effectively.js', import.meta.url));

/** The environment a test runs the CLI in: DATABASE_URL said (commands that change the database refuse without it). */
export const cliEnv = (more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: defaultDatabaseUrl(),
  ...more,
});

/** Runs `effectively <args>` to its end; its exit code, standard output and standard error. */
export async function runCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliIn(cliEnv(), ...args);
}

/** `runCli` in the environment given (as it is: nothing added). */
export async function runCliIn(
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
