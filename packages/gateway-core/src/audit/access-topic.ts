import type { JsonSchema } from './handler.ts';

/** The draft-04 meta-schema URI topic schemas name. */
export const DRAFT_04 = 'http://json-schema.org/draft-04/schema#';

const text = { type: 'string' } as const;
const integer = { type: 'integer' } as const;
const object = { type: 'object' } as const;

/**
 * The core schema of the `access` topic: the fields of an access event, in the order the incumbents'
 * schema declares them (the order a CSV handler's columns follow). `transactionId` and `timestamp` are
 * required.
 */
export const ACCESS_TOPIC_SCHEMA: JsonSchema = deepFreeze({
  $schema: DRAFT_04,
  id: '/',
  type: 'object',
  required: ['transactionId', 'timestamp'],
  properties: {
    _id: text,
    timestamp: text,
    eventName: text,
    transactionId: text,
    userId: text,
    trackingIds: { type: 'array', items: text },
    server: { type: 'object', properties: { ip: text, port: integer } },
    client: { type: 'object', properties: { ip: text, port: integer } },
    request: { type: 'object', properties: { protocol: text, operation: text, detail: object } },
    http: {
      type: 'object',
      properties: {
        request: {
          type: 'object',
          properties: {
            secure: { type: 'boolean' },
            method: text,
            path: text,
            queryParameters: object,
            headers: object,
            cookies: object,
          },
        },
        response: { type: 'object', properties: { headers: object } },
      },
    },
    response: {
      type: 'object',
      properties: {
        status: text,
        statusCode: text,
        detail: object,
        elapsedTime: integer,
        elapsedTimeUnits: text,
      },
    },
  },
});

/**
 * The fields of a topic's events as a handler that writes columns lays them out: the schema's leaves
 * in declaration order, in dot notation (`server.ip`); an object without declared properties, or an
 * array, is one field.
 */
export function topicFields(schema: JsonSchema): string[] {
  const fields: string[] = [];
  const walk = (node: unknown, prefix: string) => {
    const properties = (node as { properties?: unknown } | null)?.properties;
    if (typeof properties !== 'object' || properties === null || Object.keys(properties).length === 0) {
      if (prefix !== '') fields.push(prefix);
      return;
    }
    for (const [name, child] of Object.entries(properties))
      walk(child, prefix === '' ? name : `${prefix}.${name}`);
  };
  walk(schema, '');
  return fields;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
