import { describe } from 'vitest';
import { testReadmeExample } from '@poise/test-support/readme';

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(new URL('../README.md', import.meta.url), new URL('./', import.meta.url));
});
