import { poiseTsup } from '../../tsup.config.base';

// Two entry points: the client, and the PVE API server (`./server`: poise-sim serve, the
// daemon's tests) with its certificate helpers, kept apart so the client never loads the
// certificate generator.
export default poiseTsup(['src/index.ts', 'src/server/index.ts']);
