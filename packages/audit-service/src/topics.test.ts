import { ACCESS_TOPIC_SCHEMA } from '@portico/gateway-core/audit';
import { createMemoryLogger } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { EventTopicsMetaDataBuilder, schemaViolation } from './topics.ts';

const schema = (properties: Record<string, unknown>) => ({
  schema: { $schema: 'http://json-schema.org/draft-04/schema#', id: '/', type: 'object', properties },
});

describe('EventTopicsMetaDataBuilder', () => {
  it('gives the core topics by default: access, with its core schema', () => {
    const metadata = EventTopicsMetaDataBuilder.coreTopicSchemas().build();
    expect(metadata.topics()).toEqual(['access']);
    expect(metadata.containsTopic('access')).toBe(true);
    expect(metadata.containsTopic('config')).toBe(false);
    expect(metadata.schema('access')).toBe(ACCESS_TOPIC_SCHEMA);
  });

  it('adds fields to core topics, keeping those the core schema has, with a warning', () => {
    const logger = createMemoryLogger();
    const metadata = EventTopicsMetaDataBuilder.coreTopicSchemas(logger)
      .withCoreTopicSchemaExtensions({
        access: schema({ tenant: { type: 'string' }, eventName: { type: 'integer' } }),
        nosuch: schema({ x: { type: 'string' } }),
      })
      .build();
    const properties = metadata.schema('access')!.properties as Record<string, unknown>;
    expect(properties.tenant).toEqual({ type: 'string' });
    expect(properties.eventName).toEqual({ type: 'string' });
    expect(metadata.topics()).toEqual(['access']);
    expect(logger.records.map((r) => r.message)).toEqual([
      "the 'eventName' field of the core topic 'access' cannot be replaced; kept as it is",
    ]);
    // The core schema itself is left as it was.
    expect((ACCESS_TOPIC_SCHEMA.properties as Record<string, unknown>).tenant).toBeUndefined();
  });

  it('adds topics, but never replaces a core one, nor takes one without properties', () => {
    const logger = createMemoryLogger();
    const metadata = EventTopicsMetaDataBuilder.coreTopicSchemas(logger)
      .withAdditionalTopicSchemas({
        custom: schema({ _id: { type: 'string' }, transactionId: { type: 'string' } }),
        access: schema({ x: { type: 'string' } }),
        empty: { schema: { type: 'object' } },
      })
      .build();
    expect(metadata.topics()).toEqual(['access', 'custom']);
    expect(metadata.schema('access')).toBe(ACCESS_TOPIC_SCHEMA);
    expect(logger.records.map((r) => r.message)).toEqual([
      "the topic 'access' is a core topic and cannot be replaced; kept as it is",
      "the schema of the topic 'empty' has no properties; the topic is left out",
    ]);
    expect(
      EventTopicsMetaDataBuilder.coreTopicSchemas().withAdditionalTopicSchemas(null).build().topics(),
    ).toEqual(['access']);
  });
});

describe('schemaViolation', () => {
  it('checks type, required, properties, items and enum, naming the first problem by pointer', () => {
    const base = { _id: 'a', timestamp: 't', transactionId: 'x' };
    expect(schemaViolation(ACCESS_TOPIC_SCHEMA, base)).toBeUndefined();
    expect(schemaViolation(ACCESS_TOPIC_SCHEMA, { _id: 'a', transactionId: 'x' })).toBe(
      '/timestamp is required',
    );
    expect(schemaViolation(ACCESS_TOPIC_SCHEMA, { ...base, server: { port: 1.5 } })).toBe(
      '/server/port is not of type "integer"',
    );
    expect(schemaViolation(ACCESS_TOPIC_SCHEMA, { ...base, trackingIds: ['a', 3] })).toBe(
      '/trackingIds/1 is not of type "string"',
    );
    expect(schemaViolation(ACCESS_TOPIC_SCHEMA, { ...base, extra: { anything: true } })).toBeUndefined();
    expect(schemaViolation({ type: 'object', additionalProperties: false, properties: {} }, { a: 1 })).toBe(
      '/a is not a field of the schema',
    );
    expect(schemaViolation({ enum: ['A', 'B'] }, 'C')).toBe('/ is not one of the values allowed');
    expect(schemaViolation({ type: ['string', 'null'] }, null)).toBeUndefined();
  });
});
