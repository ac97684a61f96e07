import { adminSchema, configSchema, DEFAULT_OBJECTS, routeSchema } from '@portico/gateway-core/runtime';
import {
  accessLogSchema,
  metricsSchema,
  openTelemetrySchema,
  serverTlsSchema,
  sessionSchema,
} from '../server/settings.ts';
import {
  DEFINITIONS,
  declarationDefinitions,
  type JsonSchema,
  refTo,
  withReferences,
} from './declarations.ts';
import type { InstalledType } from './installed-types.ts';

/** The three files of an instance a schema is written for. */
export const DOCUMENTS = ['admin', 'config', 'route'] as const;
export type DocumentName = (typeof DOCUMENTS)[number];

const DRAFT = 'http://json-schema.org/draft-07/schema#';

/**
 * The JSON Schemas of admin.json, config.json and a route file for an instance with these types,
 * each whole in itself (its definitions inside), for an editor to check and complete the files with.
 */
export function configurationSchemas(types: readonly InstalledType[]): Record<DocumentName, JsonSchema> {
  const decorations = defaultDecorations(types);
  const definitions = declarationDefinitions(types, decorations);
  const document = (title: string, schema: JsonSchema): JsonSchema => ({
    $schema: DRAFT,
    title,
    ...schema,
    // The schema a file names for editors; the gateway reads it as a comment.
    properties: { $schema: { type: 'string' }, ...(schema.properties as JsonSchema) },
    [DEFINITIONS]: definitions,
  });
  return {
    admin: document('Portico admin.json', adminDocument()),
    config: document('Portico config.json', decorated(configDocument(), decorations)),
    route: document('Portico route file', decorated(routeDocument(), decorations)),
  };
}

/** admin.json: its heap, the server's TLS, session, access log and OpenTelemetry settings, and its references. */
function adminDocument(): JsonSchema {
  const admin = withReferences(adminSchema.jsonSchema());
  const properties = admin.properties as Record<string, JsonSchema>;
  const connectors = properties.connectors as { items: { properties: Record<string, JsonSchema> } };
  connectors.items.properties.tls = {
    description: 'TLS of this connector: Portico inline PEM settings, or a ServerTlsOptions object.',
    anyOf: [withReferences(serverTlsSchema.jsonSchema()), reference('object')],
  };
  properties.heap = refTo('heap');
  properties.apiProtectionFilter = reference('filter');
  properties.temporaryStorage = reference('object');
  properties.auditService = reference('object');
  properties.session = withReferences(sessionSchema.jsonSchema());
  properties.metrics = metricsSchema.jsonSchema();
  properties.accessLog = withReferences(accessLogSchema.jsonSchema());
  properties.openTelemetry = withReferences(openTelemetrySchema.jsonSchema());
  return admin;
}

function configDocument(): JsonSchema {
  const config = withReferences(configSchema.jsonSchema());
  const properties = config.properties as Record<string, JsonSchema>;
  properties.heap = refTo('heap');
  return config;
}

function routeDocument(): JsonSchema {
  const route = withReferences(routeSchema.jsonSchema());
  const properties = route.properties as Record<string, JsonSchema>;
  properties.heap = refTo('heap');
  properties.handler = reference('handler');
  properties.session = reference('object');
  properties.auditService = reference('object');
  return route;
}

/** What every other key of the file is: a decoration of its handler (`"capture": "all"`). */
function decorated(schema: JsonSchema, decorations: JsonSchema): JsonSchema {
  return {
    ...schema,
    // A field of the file wins over a decoration of its name (a route's own `baseURI`).
    properties: { ...decorations, ...(schema.properties as JsonSchema) },
    additionalProperties: true,
  };
}

/** A reference by name or inline declaration to a heap object of `kind`. */
function reference(kind: string): JsonSchema {
  return { anyOf: [{ type: 'string', minLength: 1 }, refTo(`inline.${kind}`)] };
}

/**
 * The decorations every configuration has without declaring a decorator (`audit`, `baseURI`,
 * `capture`, `timer`), each checked by its decorator's schema when the decorator is installed.
 * Other keys may name decorators the configuration declares: they are accepted as they are.
 */
function defaultDecorations(types: readonly InstalledType[]): JsonSchema {
  const out: JsonSchema = {};
  for (const { name, type } of DEFAULT_OBJECTS) {
    const installed = types.find((t) => t.type === type && t.kind === 'decorator');
    if (installed === undefined) continue;
    const decoration = installed.heaplet.decoration?.jsonSchema() ?? {};
    out[name] = {
      description: `A decoration by the default ${type}.`,
      ...withReferences(decoration),
    };
  }
  return out;
}
