/** The library logs through this; inject your own (pino, console, ...). */
export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

function line(level: string, message: string, fields?: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...fields })}\n`);
}

/** Default: warnings and errors as JSON lines on stderr; nothing else. */
export const stderrLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message, fields) => line('warn', message, fields),
  error: (message, fields) => line('error', message, fields),
};

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return { error: error.message, code: (error as { code?: unknown }).code, errorName: error.name };
  }
  return { error: String(error) };
}
