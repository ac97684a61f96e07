import { EXPRESSION_TEXT, KINDS, type Kind, REFERENCE_MARK } from '@portico/gateway-core/runtime';
import type { InstalledType } from './installed-types.ts';

/** A JSON Schema, as plain JSON. */
export type JsonSchema = Record<string, unknown>;

/** Where a document's definitions are: draft-07's `definitions`, which editors read best. */
export const DEFINITIONS = 'definitions';

export const refTo = (name: string): JsonSchema => ({ $ref: `#/${DEFINITIONS}/${name}` });

/** The definition of a type's `config`: `config.HeaderFilter`. */
export const configDefinition = (type: string): string => `config.${type}`;

/**
 * The definitions every document shares: the `config` of each installed type, a heap object
 * declared by name or inline (`{name, type, config}` and its decorations: a union on `type`, each
 * name and alias of a type selecting its `config`), the same for each kind a reference may name,
 * and a heap. A type no installed plugin provides is accepted with any config: a configuration may
 * name types of plugins this instance lacks, and `portico validate` says which.
 */
export function declarationDefinitions(
  types: readonly InstalledType[],
  decorations: JsonSchema,
): Record<string, JsonSchema> {
  const definitions: Record<string, JsonSchema> = {};
  for (const { type, heaplet } of types)
    definitions[configDefinition(type)] = withReferences(heaplet.config.jsonSchema());
  const everyName = types.flatMap((t) => [t.type, ...t.aliases]).sort();
  const heapObject = (required: string[]): JsonSchema => ({
    type: 'object',
    description: 'A heap object: its type, its settings and its decorations.',
    properties: {
      name: { type: 'string', minLength: 1 },
      type: { anyOf: [{ enum: everyName }, { type: 'string', minLength: 1 }] },
      config: { type: 'object' },
      logSink: { type: 'string', minLength: 1 },
      temporaryStorage: { type: 'string', minLength: 1 },
      comment: {},
      comments: {},
      ...decorations,
    },
    required,
    allOf: types.map(({ type, aliases }) => selectConfig(type, aliases)),
  });
  definitions.inline = heapObject(['type']);
  definitions.declaration = heapObject(['name', 'type']);
  const heapList = { type: 'array', items: refTo('declaration') };
  definitions.heap = {
    anyOf: [heapList, { type: 'object', properties: { objects: heapList }, required: ['objects'] }],
  };
  for (const kind of KINDS) definitions[`inline.${kind}`] = ofKind(kind, types);
  return definitions;
}

/** `then` the type's config is checked; a config is required when the type has required settings. */
function selectConfig(type: string, aliases: readonly string[]): JsonSchema {
  return {
    if: {
      properties: { type: { type: 'string', pattern: namesPattern([type, ...aliases]) } },
      required: ['type'],
    },
    // biome-ignore lint/suspicious/noThenProperty: a keyword of the JSON Schema written out
    then: { properties: { config: refTo(configDefinition(type)) } },
  };
}

/** An inline declaration of a type of `kind`, or of a type no installed plugin provides. */
function ofKind(kind: Kind, types: readonly InstalledType[]): JsonSchema {
  const names = (list: readonly InstalledType[]) => list.flatMap((t) => [t.type, ...t.aliases]).sort();
  const own = names(types.filter((t) => t.kind === kind));
  const type: JsonSchema[] = [{ not: { type: 'string', pattern: namesPattern(names(types)) } }];
  if (own.length > 0) type.unshift({ enum: own }, { type: 'string', pattern: namesPattern(own) });
  return { allOf: [refTo('inline')], properties: { type: { anyOf: type } } };
}

/**
 * A pattern matching these type names as configurations write them: the name itself, or a Java
 * class name ending in it (`org.forgerock.openig.filter.HeaderFilter`), as the registry reads them.
 */
export function namesPattern(names: readonly string[]): string {
  const alternatives = names.map((name) => name.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'));
  return `^(?:.+\\.)?(?:${alternatives.join('|')})$`;
}

/**
 * A heaplet's JSON Schema made part of the document: each reference (marked by the core) becomes a
 * name or an inline declaration of its kind (and of its types, when it names them), and a string
 * of a format (`uri`, `regex`) may also be an expression, as every string setting may.
 */
export function withReferences(schema: unknown): JsonSchema {
  return transform(schema) as JsonSchema;
}

function transform(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(transform);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    // A setting takes the first of its forms that fits: forms that overlap (a name, and a reference
    // that may be a name too) are no error, so `oneOf` is read as `anyOf`.
    out[key === 'oneOf' && !Object.hasOwn(node, 'anyOf') ? 'anyOf' : key] = transform(value);
  }
  const mark = out[REFERENCE_MARK] as { kind: Kind; types?: string[] } | undefined;
  if (mark !== undefined) {
    const { [REFERENCE_MARK]: _mark, anyOf: _forms, ...annotations } = out;
    const inline =
      mark.types === undefined
        ? refTo(`inline.${mark.kind}`)
        : {
            allOf: [refTo('inline')],
            properties: { type: { type: 'string', pattern: namesPattern(mark.types) } },
          };
    return { ...annotations, anyOf: [{ type: 'string', minLength: 1 }, inline] };
  }
  if (out.type === 'string' && typeof out.format === 'string') {
    const { description, default: fallback, ...value } = out;
    return {
      ...(description === undefined ? {} : { description }),
      ...(fallback === undefined ? {} : { default: fallback }),
      anyOf: [value, { ...EXPRESSION_TEXT }],
    };
  }
  return out;
}
