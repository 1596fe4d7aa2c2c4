import { poiseTsup } from '../../tsup.config.base';

// the simulator adapter is its own entry: compare's worker threads import it by file
export default poiseTsup(['src/cli.ts'], {
  entry: { cli: 'src/cli.ts', 'lab/sim-adapter': 'src/lab/sim-adapter.ts' },
  dts: false,
  banner: { js: '#!/usr/bin/env node' },
});
