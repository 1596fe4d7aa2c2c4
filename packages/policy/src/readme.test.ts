import { testReadmeExample } from '@poise/test-support/readme';

// The README's example is real code: this runs the ```ts block under "## Example" and compares
// what it prints with the ```text block that follows it.
testReadmeExample(new URL('../README.md', import.meta.url), new URL('./', import.meta.url));
