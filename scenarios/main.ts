// npm run scenario -- <name> [options]: runs one named scenario. Each lives in its own folder as `scenarios/<name>/main.ts`
// and reads its own options from process.argv.
const scenarios: Record<string, string> = {
  'notification-system': './boxoffice/main.ts',
  'payment-system': './boxoffice/main.ts',
  'retry-storm': './boxoffice/main.ts',
  'effects-retry-storm': './retry-storm/main.ts',
  pipeline: './pipeline/main.ts',
  poison: './poison/main.ts',
};
// the boxoffice scenarios read their name as their first argument
const named = new Set(['notification-system', 'payment-system', 'retry-storm']);

const name = process.argv[2];
const module = name ? scenarios[name] : undefined;
if (!module) {
  console.error(`usage: npm run scenario -- <${Object.keys(scenarios).join('|')}> [options]`);
  process.exitCode = name ? 2 : 0;
} else {
  if (!named.has(name!)) process.argv.splice(2, 1);
  await import(module);
}
