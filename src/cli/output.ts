/**
 * Where a command's lines go: the terminal for the CLI, anything for `operatorCommand` run inside an application (an
 * admin route that returns the lines, a log). `tty` draws progress bars; otherwise progress is a line per quarter.
 */
export interface Output {
  log(line: string): void;
  error(line: string): void;
  /** Progress drawn in place (a terminal). Default false. */
  tty?: boolean;
  /** Raw text without a newline, for a progress bar (only used when `tty`). */
  write?(text: string): void;
}

export const consoleOutput: Output = {
  log: (line) => console.log(line),
  error: (line) => console.error(line),
  tty: process.stdout.isTTY === true,
  write: (text) => process.stdout.write(text),
};

/** An Output that keeps the lines (stdout and stderr apart), for an admin route or a test. */
export function collectedOutput(): Output & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, log: (line) => lines.push(line), error: (line) => errors.push(line) };
}
