import { consoleOutput, type Output } from './output.ts';

/** A progress bar on a terminal; plain lines (one per quarter) when the output is not a terminal. */
export function progress(label: string, total: number, unit = 'done', output: Output = consoleOutput) {
  const tty = output.tty === true && output.write !== undefined;
  let lastQuarter = -1;
  return {
    update(done: number) {
      const ratio = Math.min(1, done / total);
      if (tty) {
        const width = 30;
        const filled = Math.round(ratio * width);
        output.write?.(`\r${label.padEnd(12)} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}`);
      } else {
        const quarter = Math.floor(ratio * 4);
        if (quarter > lastQuarter) {
          lastQuarter = quarter;
          output.log(`${label}: ${done}/${total} ${unit}`);
        }
      }
    },
    end() {
      if (tty) output.write?.('\n');
    },
  };
}
