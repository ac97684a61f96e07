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
 * conforms. The schema is compiled into checks once (kept per schema object); a check walks the
 * value once, and the pointer is only made for a value that breaks it.
 */
export function schemaViolation(schema: unknown, value: unknown): string | undefined {
  const found = checkOf(schema)(value);
  if (found === undefined) return undefined;
  const pointer = found.at
    .reverse()
    .map((segment) => `/${escapeSegment(segment)}`)
    .join('');
  return `${pointer || '/'} ${found.reason}`;
}

/** A violation: the reason, and the path to it, innermost segment first (pushed on the way out). */
interface Violation {
  at: string[];
  reason: string;
}

type Check = (value: unknown) => Violation | undefined;

const NO_CHECK: Check = () => undefined;
const compiled = new WeakMap<object, Check>();

function checkOf(schema: unknown): Check {
  if (typeof schema !== 'object' || schema === null) return NO_CHECK;
  let check = compiled.get(schema);
  if (check === undefined) {
    check = compile(schema as Record<string, unknown>);
    compiled.set(schema, check);
  }
  return check;
}

function compile(s: Record<string, unknown>): Check {
  const type = s.type;
  const typeReason = `is not of type ${JSON.stringify(type)}`;
  const allowed = Array.isArray(s.enum) ? s.enum : undefined;
  const required = Array.isArray(s.required)
    ? s.required.filter((f): f is string => typeof f === 'string')
    : [];
  const properties = new Map<string, Check>();
  if (isObject(s.properties))
    for (const [field, child] of Object.entries(s.properties)) properties.set(field, checkOf(child));
  const closed = s.additionalProperties === false;
  const items = s.items !== undefined && !Array.isArray(s.items) ? checkOf(s.items) : undefined;
  const walksFields = properties.size > 0 || closed;
  return (value) => {
    if (type !== undefined && !hasType(value, type)) return { at: [], reason: typeReason };
    if (allowed !== undefined && !allowed.some((one) => one === value))
      return { at: [], reason: 'is not one of the values allowed' };
    if (isObject(value)) {
      for (const field of required)
        if (value[field] === undefined) return { at: [field], reason: 'is required' };
      if (walksFields) {
        for (const field in value) {
          const check = properties.get(field);
          if (check !== undefined) {
            const found = check(value[field]);
            if (found !== undefined) {
              found.at.push(field);
              return found;
            }
          } else if (closed) {
            return { at: [field], reason: 'is not a field of the schema' };
          }
        }
      }
    } else if (items !== undefined && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = items(value[i]);
        if (found !== undefined) {
          found.at.push(String(i));
          return found;
        }
      }
    }
    return undefined;
  };
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
