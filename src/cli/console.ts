import { createConsole } from '../console/console.ts';
import type { Db } from '../db/port.ts';
import { printable } from './printable.ts';

export interface ConsoleArgs {
  schema: string;
  host?: string | undefined;
  port?: string | undefined;
  transport?: string | undefined;
  topic?: string | undefined;
  readOnly: boolean;
}

/** The console's default port when none is said. */
export const defaultConsolePort = 8089;

/**
 * effectively console: serves the console until SIGINT/SIGTERM and prints the links that log in (operator and
 * reader). Tokens come from EFFECTIVELY_CONSOLE_TOKEN / EFFECTIVELY_CONSOLE_READER_TOKEN, else fresh random ones.
 */
export async function consoleCommand(db: Db, args: ConsoleArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const port = args.port === undefined ? defaultConsolePort : Number(args.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`console: --port must be a port number, not ${printable(args.port ?? '')}`);
    return 2;
  }
  if (args.transport !== undefined && args.transport !== 'kafka' && args.transport !== 'postgres') {
    console.error(`console: --transport must be kafka or postgres, not ${printable(args.transport)}`);
    return 2;
  }
  const topics = args.topic
    ?.split(',')
    .map((topic) => topic.trim())
    .filter(Boolean);
  const server = createConsole({
    db,
    schema: args.schema,
    host: args.host ?? env.EFFECTIVELY_CONSOLE_HOST ?? '127.0.0.1',
    port,
    readOnly: args.readOnly,
    ...(args.transport ? { transport: args.transport } : {}),
    ...(topics?.length ? { topics } : {}),
    tokens: {
      ...(env.EFFECTIVELY_CONSOLE_TOKEN ? { operator: env.EFFECTIVELY_CONSOLE_TOKEN } : {}),
      ...(env.EFFECTIVELY_CONSOLE_READER_TOKEN ? { reader: env.EFFECTIVELY_CONSOLE_READER_TOKEN } : {}),
    },
  });
  await server.start();
  const links = server.links!;
  console.log(`console: serving ${server.url} on schema ${args.schema}${args.readOnly ? ' (read-only)' : ''}`);
  console.log(`console: operator: ${links.operator}`);
  console.log(`console: reader:   ${links.reader}`);
  console.log('console: SIGINT or SIGTERM to stop');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  console.log('console: stopped');
  return 0;
}
