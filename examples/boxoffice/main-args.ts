// The command line of main.ts, and the one it gives each service's process in the --kafka mode: one list of options
// for both, so a child never gets an option its own parser refuses (it would exit before starting).
import { parseArgs } from 'node:util';

export const mainOptions = {
  kafka: { type: 'boolean', default: false },
  service: { type: 'string' },
  port: { type: 'string', default: '8080' },
  'email-url': { type: 'string' },
  'payment-url': { type: 'string' },
} as const;

export function parseMainArgs(args?: string[]) {
  return parseArgs({ options: mainOptions, ...(args && { args }) }).values;
}

/** The arguments of one service's process (`--service <name>` and the rest from the parent). */
export function serviceArgs(name: string, port: string, urls: { emailUrl: string; paymentUrl: string }): string[] {
  return ['--service', name, '--port', port, '--email-url', urls.emailUrl, '--payment-url', urls.paymentUrl];
}
