import { compileJavaRegex, type Logger } from '@portico/gateway-core';
import formatsPlugin, { type FormatName } from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { OpenAPIBackend } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { parse as parseYaml } from 'yaml';

/**
 * An OpenAPI 3 document, read and checked at load: its text (JSON or YAML), its version, its
 * references (only within the document: nothing is fetched). What is wrong is a sentence for the
 * configuration error; the filter turns it into a PorticoError at the `spec` setting.
 */
export function readDocument(text: string): { document: OpenAPIV3.Document } | { problem: string } {
  let parsed: unknown;
  try {
    // YAML 1.2 reads JSON as well; one document only, no custom tags.
    parsed = parseYaml(text, { uniqueKeys: true, maxAliasCount: 1000 });
  } catch (error) {
    return { problem: `the OpenAPI document is neither JSON nor YAML: ${firstLine(error)}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { problem: 'the OpenAPI document is not an object' };
  }
  const record = parsed as Record<string, unknown>;
  if (typeof record.swagger === 'string') {
    return {
      problem: `the document is Swagger ${record.swagger}; OpenApiValidationFilter reads OpenAPI 3.0 and 3.1 documents (convert it, for instance with swagger2openapi)`,
    };
  }
  if (typeof record.openapi !== 'string' || !/^3\.[01]\.\d+/.test(record.openapi)) {
    return { problem: "the document has no 'openapi' version 3.0.x or 3.1.x" };
  }
  const external = externalReference(record);
  if (external !== undefined) {
    return {
      problem: `the document refers outside itself ($ref '${external}'): give the document whole, its references within it (#/components/...)`,
    };
  }
  return { document: record as unknown as OpenAPIV3.Document };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** The first `$ref` that does not point within the document, if any. */
function externalReference(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) {
      stack.push(...next);
      continue;
    }
    for (const [key, item] of Object.entries(next)) {
      if (key === '$ref' && typeof item === 'string' && !item.startsWith('#')) return item;
      stack.push(item);
    }
  }
  return undefined;
}

/** How Ajv makes the `pattern`s of the document's schemas: on the gateway's linear-time engine. */
const LINEAR_REGEXP = Object.assign((pattern: string) => compileJavaRegex(pattern), {
  code: 'compileJavaRegex',
});

const OPENAPI_FORMATS = new Set(['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password']);

/** The ajv-formats formats the document's schemas name. */
function formatsUsed(document: unknown): FormatName[] {
  // openapi-backend defines the OpenAPI ones (int32, int64, float, double, byte, binary, password).
  const known = new Set<string>(Object.keys(fullFormats).filter((name) => !OPENAPI_FORMATS.has(name)));
  const found = new Set<FormatName>();
  const stack: unknown[] = [document];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    for (const [key, item] of Object.entries(next)) {
      if (key === 'format' && typeof item === 'string' && known.has(item)) found.add(item as FormatName);
      else stack.push(item);
    }
  }
  return [...found];
}

/** What `compile` gives: the validators of every operation, built once. */
export type CompiledDocument = OpenAPIBackend;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Compiles the validators of every operation (openapi-backend on Ajv, `quick` off: the document is
 * checked against the OpenAPI schema and every request, parameter and response validator compiled
 * now, none later). Operations without an `operationId` get one, since the validators are kept by
 * it. Patterns of the document's schemas run on the gateway's linear-time regular expressions.
 */
export async function compileDocument(
  document: OpenAPIV3.Document,
  logger: Logger,
): Promise<CompiledDocument> {
  const copy = structuredClone(document) as OpenAPIV3.Document;
  let n = 0;
  for (const [path, item] of Object.entries(copy.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, OpenAPIV3.OperationObject | undefined>)?.[method];
      if (operation !== undefined && operation.operationId === undefined)
        operation.operationId = `portico-${n++} ${method.toUpperCase()} ${path}`;
    }
  }
  const formats = formatsUsed(copy);
  const api = new OpenAPIBackend({
    definition: copy,
    strict: true,
    quick: false,
    validate: true,
    ajvOpts: {
      allErrors: true,
      code: { regExp: LINEAR_REGEXP },
      // Ajv's remarks on the document (a format it does not know) go to the gateway's log.
      logger: {
        log: (...args: unknown[]) => logger.debug(args.join(' ')),
        warn: (...args: unknown[]) => logger.debug(args.join(' ')),
        error: (...args: unknown[]) => logger.warn(args.join(' ')),
      },
    },
    // The formats of JSON Schema (date-time, email, uri ...) besides openapi-backend's own (int32
    // ...): only those the document uses, since every validator gets an Ajv of its own.
    customizeAjv: (ajv) =>
      formats.length === 0 ? ajv : (formatsPlugin.default(ajv as never, formats) as never),
  });
  await api.init();
  return api;
}
