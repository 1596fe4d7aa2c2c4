import { readFileSync } from 'node:fs';
import { poiseTsup } from '../../tsup.config.base';
import { buildStatusPage } from './web/build';

// The version is compiled in (src/version.ts reads package.json only when run from source), so
// a bundle of one file, wherever it is installed, knows its version.
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default poiseTsup(['src/cli.ts'], {
  dts: false,
  banner: { js: '#!/usr/bin/env node' },
  define: { __POISE_MANAGER_VERSION__: JSON.stringify(version) },
  // the status page beside the bundle (dist/ui/), where the daemon serves it from
  onSuccess: async () => {
    await buildStatusPage(new URL('./dist/ui', import.meta.url).pathname);
  },
});
