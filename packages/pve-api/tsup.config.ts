import { poiseTsup } from '../../tsup.config.base';

// Two entry points: the client, and the fake server / certificate helpers for tests and the
// simulator (kept apart so the client never loads the certificate generator).
export default poiseTsup(['src/index.ts', 'src/testing/index.ts']);
