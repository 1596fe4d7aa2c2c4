import { PlanError } from './errors';
import type { PlanInput } from './types';
import { validatePlanInput } from './validate';

/**
 * The JSON form of a {@link PlanInput} as a JSON Schema (draft 2020-12): what
 * `poise-manager plan --snapshot <file.json>` reads. Units: cores and bytes; every field is
 * described where {@link PlanInput} declares it. `parsePlanJson` applies the same rules, and
 * more (unique names, known nodes and guests in rules), with messages naming the field.
 */
export const PLAN_INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'poise plan input',
  type: 'object',
  additionalProperties: false,
  required: ['nodes', 'guests'],
  properties: {
    nodes: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'cpuCores', 'memBytes'],
        properties: {
          name: { type: 'string', minLength: 1 },
          cpuCores: { type: 'number', minimum: 0, description: 'physical cores (> 0 unless the node is offline)' },
          memBytes: {
            type: 'number',
            minimum: 0,
            description: 'physical memory, bytes (> 0 unless the node is offline)',
          },
          online: { type: 'boolean', default: true },
          maintenance: { type: 'boolean', default: false },
          baseCpu: {
            type: 'number',
            minimum: 0,
            default: 0,
            description: 'cores in use by what no listed guest accounts for',
          },
          baseMem: {
            type: 'number',
            minimum: 0,
            default: 0,
            description: 'bytes in use by what no listed guest accounts for',
          },
        },
      },
    },
    guests: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'kind', 'node', 'cpu', 'mem'],
        properties: {
          id: { type: 'string', minLength: 1 },
          kind: { enum: ['vm', 'ct'] },
          node: { type: 'string', minLength: 1 },
          ha: { type: 'boolean', default: false },
          cpu: { type: 'number', minimum: 0, description: 'cores in use' },
          cores: { type: 'number', minimum: 0, description: 'assigned cores (default: cpu)' },
          mem: { type: 'number', minimum: 0, description: 'memory in use, bytes' },
          memhost: { type: 'number', minimum: 0, description: 'host-side memory footprint, bytes' },
          migratable: { type: 'boolean', default: true },
          reason: { type: 'string', description: 'why it cannot be migrated' },
          ignored: { type: 'boolean', default: false },
        },
      },
    },
    rules: {
      type: 'array',
      items: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'type', 'resources', 'nodes'],
            properties: {
              id: { type: 'string', minLength: 1 },
              type: { const: 'node-affinity' },
              resources: { type: 'array', minItems: 1, items: { type: 'string' } },
              nodes: {
                type: 'array',
                minItems: 1,
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['node'],
                  properties: { node: { type: 'string' }, priority: { type: 'number', default: 0 } },
                },
              },
              strict: { type: 'boolean', default: false },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'type', 'affinity', 'resources'],
            properties: {
              id: { type: 'string', minLength: 1 },
              type: { const: 'resource-affinity' },
              affinity: { enum: ['positive', 'negative'] },
              resources: { type: 'array', minItems: 1, items: { type: 'string' } },
            },
          },
        ],
      },
    },
    capacity: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cpuOvercommitRatio: {
          type: 'number',
          exclusiveMinimum: 0,
          description: 'assigned cores <= ratio x node cores',
        },
        memoryHeadroomPercent: { type: 'number', minimum: 0, exclusiveMaximum: 100, default: 0 },
      },
    },
    weights: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cpu: { type: 'number', minimum: 0 },
        mem: { type: 'number', minimum: 0 },
        move: { type: 'number', minimum: 0 },
        gib: { type: 'number', minimum: 0 },
      },
    },
  },
} as const;

/**
 * Parses and validates a plan input from JSON text (a snapshot file). Throws `PlanError`:
 * `invalid-json` when the text is not JSON (the message says where), `invalid-input` when it
 * breaks {@link PLAN_INPUT_SCHEMA} or the rules of `validatePlanInput` (the message names the
 * field, e.g. `cluster.json: guest 'vm:101' (guests[3]): mem must be a finite number >= 0 …`).
 * `source` (a file name) prefixes every message. The text is read by `JSON.parse`: of a key
 * given twice the last value counts (`poise-manager --snapshot` reads with a strict reader
 * that refuses it, then calls {@link checkPlanJson}).
 */
export function parsePlanJson(text: string, source = 'input'): PlanInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new PlanError(
      'invalid-json',
      `${source}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return checkPlanJson(value, source);
}

/**
 * Validates a parsed JSON value as a plan input (the second half of `parsePlanJson`, for
 * a caller with its own JSON reader, e.g. one that refuses duplicate keys). Throws `PlanError`
 * `invalid-input` with `source` prefixed to the message.
 */
export function checkPlanJson(value: unknown, source = 'input'): PlanInput {
  try {
    validatePlanInput(value);
  } catch (err) {
    if (err instanceof PlanError) throw new PlanError(err.code, `${source}: ${err.message}`, { cause: err });
    throw err;
  }
  return value as PlanInput;
}
