import type { Logger } from '@portico/gateway-core';
import { ACCESS_TOPIC_SCHEMA, type JsonSchema } from '@portico/gateway-core/audit';

/** A topic's metadata as the incumbents write it: `{ "schema": { ...draft-04... } }`. */
export interface TopicDefinition {
  readonly schema: JsonSchema;
}

/** Topic name → definition, as `withCoreTopicSchemaExtensions` and `withAdditionalTopicSchemas` take it. */
export type TopicDefinitions = Readonly<Record<string, unknown>>;

/** The core topics: those the gateway itself sends. */
const CORE_TOPICS: Readonly<Record<string, JsonSchema>> = { access: ACCESS_TOPIC_SCHEMA };

/** The topics an audit service knows, each with its schema (made by EventTopicsMetaDataBuilder). */
export class EventTopicsMetaData {
  readonly #schemas: ReadonlyMap<string, JsonSchema>;

  constructor(schemas: ReadonlyMap<string, JsonSchema>) {
    this.#schemas = schemas;
  }

  topics(): string[] {
    return [...this.#schemas.keys()];
  }

  containsTopic(topic: string): boolean {
    return this.#schemas.has(topic);
  }

  /** The topic's schema (draft-04), or undefined for a topic it does not know. */
  schema(topic: string): JsonSchema | undefined {
    return this.#schemas.get(topic);
  }

  /** Each topic's schema, for handlers' `start`. */
  schemas(): ReadonlyMap<string, JsonSchema> {
    return this.#schemas;
  }
}

/**
 * Builds an EventTopicsMetaData: the core topics' schemas (`coreTopicSchemas()`), with fields added
 * to them (`withCoreTopicSchemaExtensions`: a field the core schema has already is kept as it is, with
 * a warning) and new topics (`withAdditionalTopicSchemas`: a core topic cannot be replaced, and a
 * definition without `schema.properties` is left out, each with a warning).
 */
export class EventTopicsMetaDataBuilder {
  #extensions: TopicDefinitions = {};
  #additional: TopicDefinitions = {};
  readonly #logger: Logger | undefined;

  private constructor(logger: Logger | undefined) {
    this.#logger = logger;
  }

  /** A builder whose metadata holds the core topics' schemas. */
  static coreTopicSchemas(logger?: Logger): EventTopicsMetaDataBuilder {
    return new EventTopicsMetaDataBuilder(logger);
  }

  withCoreTopicSchemaExtensions(extensions: TopicDefinitions | null | undefined): this {
    this.#extensions = extensions ?? {};
    return this;
  }

  withAdditionalTopicSchemas(additional: TopicDefinitions | null | undefined): this {
    this.#additional = additional ?? {};
    return this;
  }

  build(): EventTopicsMetaData {
    const schemas = new Map<string, JsonSchema>();
    for (const [topic, schema] of Object.entries(CORE_TOPICS)) schemas.set(topic, schema);
    for (const [topic, definition] of Object.entries(this.#extensions)) {
      const core = schemas.get(topic);
      if (core === undefined) continue;
      const added = propertiesOf(definition);
      if (added === undefined) continue;
      const properties: Record<string, unknown> = { ...(core.properties as Record<string, unknown>) };
      for (const [field, schema] of Object.entries(added)) {
        if (Object.hasOwn(properties, field)) {
          this.#logger?.warn(
            `the '${field}' field of the core topic '${topic}' cannot be replaced; kept as it is`,
          );
        } else {
          properties[field] = schema;
        }
      }
      schemas.set(topic, { ...core, properties });
    }
    for (const [topic, definition] of Object.entries(this.#additional)) {
      if (schemas.has(topic)) {
        this.#logger?.warn(`the topic '${topic}' is a core topic and cannot be replaced; kept as it is`);
      } else if (propertiesOf(definition) === undefined) {
        this.#logger?.warn(`the schema of the topic '${topic}' has no properties; the topic is left out`);
      } else {
        schemas.set(topic, (definition as TopicDefinition).schema);
      }
    }
    return new EventTopicsMetaData(schemas);
  }
}

function propertiesOf(definition: unknown): Record<string, unknown> | undefined {
  const schema = (definition as { schema?: unknown } | null)?.schema;
  const properties = (schema as { properties?: unknown } | null)?.properties;
  return typeof properties === 'object' && properties !== null && !Array.isArray(properties)
    ? (properties as Record<string, unknown>)
    : undefined;
}

/**
 * The first way `value` breaks `schema` (draft-04: `type`, `properties`, `required`, `items`,
 * `enum`, `additionalProperties: false`), as a JSON pointer and a reason, or undefined when it
 * conforms. One walk over the value.
 */
export function schemaViolation(schema: unknown, value: unknown, at = ''): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const s = schema as Record<string, unknown>;
  if (s.type !== undefined && !hasType(value, s.type))
    return `${at || '/'} is not of type ${JSON.stringify(s.type)}`;
  if (Array.isArray(s.enum) && !s.enum.some((allowed) => allowed === value))
    return `${at || '/'} is not one of the values allowed`;
  if (isObject(value)) {
    if (Array.isArray(s.required)) {
      for (const field of s.required)
        if (typeof field === 'string' && value[field] === undefined) return `${at}/${field} is required`;
    }
    const properties = isObject(s.properties) ? s.properties : {};
    for (const [field, child] of Object.entries(value)) {
      const declared = properties[field];
      if (declared !== undefined) {
        const found = schemaViolation(declared, child, `${at}/${escapeSegment(field)}`);
        if (found !== undefined) return found;
      } else if (s.additionalProperties === false) {
        return `${at}/${escapeSegment(field)} is not a field of the schema`;
      }
    }
  }
  if (Array.isArray(value) && s.items !== undefined && !Array.isArray(s.items)) {
    for (const [i, item] of value.entries()) {
      const found = schemaViolation(s.items, item, `${at}/${i}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function hasType(value: unknown, type: unknown): boolean {
  if (Array.isArray(type)) return type.some((t) => hasType(value, t));
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapeSegment(field: string): string {
  return field.replaceAll('~', '~0').replaceAll('/', '~1');
}
