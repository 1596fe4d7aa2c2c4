import { readFileSync } from 'node:fs';
import { poiseTsup } from '../../tsup.config.base';

// The version is compiled in (src/version.ts reads package.json only when run from source), so
// a bundle of one file, wherever it is installed, knows its version.
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default poiseTsup(['src/cli.ts'], {
  dts: false,
  banner: { js: '#!/usr/bin/env node' },
  define: { __POISE_MANAGER_VERSION__: JSON.stringify(version) },
});
