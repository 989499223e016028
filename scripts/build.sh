#!/usr/bin/env bash
# Compiles src/ into dist/: ESM JavaScript (relative `.ts` specifiers rewritten to `.js`), `.d.ts` and source maps
# with the sources inlined (src/ is not shipped). The SQL files are copied beside their modules, which read them
# relative to `import.meta.url` (src/db/sql.ts, src/db/migrate.ts); so are the console's page files.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

out=$(mktemp -d dist.build.XXXXXX)
trap 'rm -rf "$out"' EXIT
node_modules/.bin/tsc -p tsconfig.build.json --outDir "$out"
(cd src && find . -name '*.sql' -exec cp --parents {} "../$out/" \;)
(cd src && find ./console/page -type f -exec cp --parents {} "../$out/" \;) # the console's page, read beside its module
rm -rf dist
mv -T "$out" dist # fails, rather than nesting, if another build put a dist/ back in between
echo "build: dist/ in $((SECONDS - started)) s ($(find dist -name '*.js' | wc -l) modules, $(find dist -name '*.sql' | wc -l) SQL files)"
