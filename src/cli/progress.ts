/** A progress bar on a terminal; plain lines (one per quarter) when the output is not a terminal. */
export function progress(label: string, total: number, unit = 'done') {
  const tty = process.stdout.isTTY === true;
  let lastQuarter = -1;
  return {
    update(done: number) {
      const ratio = Math.min(1, done / total);
      if (tty) {
        const width = 30;
        const filled = Math.round(ratio * width);
        process.stdout.write(
          `\r${label.padEnd(12)} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${done}/${total}`,
        );
      } else {
        const quarter = Math.floor(ratio * 4);
        if (quarter > lastQuarter) {
          lastQuarter = quarter;
          console.log(`${label}: ${done}/${total} ${unit}`);
        }
      }
    },
    end() {
      if (tty) process.stdout.write('\n');
    },
  };
}
