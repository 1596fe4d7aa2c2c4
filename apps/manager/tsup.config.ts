import { poiseTsup } from '../../tsup.config.base';

export default poiseTsup(['src/cli.ts'], { dts: false, banner: { js: '#!/usr/bin/env node' } });
