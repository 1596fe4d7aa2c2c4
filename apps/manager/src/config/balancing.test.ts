import { describe, expect, it } from 'vitest';
import { ManagerError } from '../errors';
import { parseConfig } from './load';
import { configJsonSchema } from './schema';

const PVE_MIN = { env: 'pve', pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TOKEN' } };

function refusal(doc: unknown): string {
  try {
    parseConfig(doc, 'test.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(ManagerError);
    return (err as Error).message;
  }
  throw new Error('expected the config to be refused');
}

describe('balancing.allow-partial-view', () => {
  it('is off by default: a round with a usable node left out decides nothing', () => {
    expect(parseConfig(PVE_MIN, 'test.yaml').balancing.allowPartialView).toBe(false);
  });

  it('true or false', () => {
    const on = parseConfig({ ...PVE_MIN, balancing: { 'allow-partial-view': true } }, 'test.yaml');
    expect(on.balancing.allowPartialView).toBe(true);
  });

  it.each([
    [{ 'allow-partial-view': 'yes' }, 'test.yaml: balancing.allow-partial-view: expected true or false, got "yes"'],
    [{ 'allow-partial-view': 1 }, 'test.yaml: balancing.allow-partial-view: expected true or false, got 1'],
    [{ 'allow-partial-views': true }, 'test.yaml: balancing.allow-partial-views: unknown key'],
    ['on', 'test.yaml: balancing: expected a mapping of settings, got "on"'],
  ])('a bad value %j is refused, naming the key', (balancing, message) => {
    expect(refusal({ ...PVE_MIN, balancing })).toContain(message);
  });

  it('is in the JSON schema with its default and description', () => {
    const properties = (configJsonSchema() as { properties: Record<string, { properties: Record<string, unknown> }> })
      .properties;
    expect(properties.balancing!.properties['allow-partial-view']).toMatchObject({
      type: 'boolean',
      default: false,
    });
  });
});
