// npm run scenario -- <name> [options]: runs one named scenario. Each lives in its own folder as `scenarios/<name>/main.ts`
// and reads its own options from process.argv.
const scenarios: Record<string, string> = {
  pipeline: './pipeline/main.ts',
  poison: './poison/main.ts',
  'retry-storm': './retry-storm/main.ts',
};

const name = process.argv[2];
const module = name ? scenarios[name] : undefined;
if (!module) {
  console.error(`usage: npm run scenario -- <${Object.keys(scenarios).join('|')}> [options]`);
  process.exitCode = name ? 2 : 0;
} else {
  process.argv.splice(2, 1);
  await import(module);
}
