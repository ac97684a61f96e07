import { compileJavaRegex } from '@portico/gateway-core';
import type { Operation as BackendOperation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

/** One operation of the document: its method, path template and definition (references resolved). */
export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly definition: OpenAPIV3.OperationObject & { operationId: string };
  /** Parameters of the operation and of its path item, the operation's first. */
  readonly parameters: readonly OpenAPIV3.ParameterObject[];
  /** The same, as openapi-backend's validators take it (they read its `operationId` and `responses`). */
  readonly backendOperation: BackendOperation;
}

/** A segment of a path template: a literal, one whole parameter, or a pattern with parameters in it. */
type Segment =
  | { kind: 'literal'; text: string }
  | { kind: 'parameter'; name: string }
  | { kind: 'mixed'; pattern: RegExp; names: string[] };

interface Template {
  segments: Segment[];
  /** How many literal segments: the more, the more specific (`/pets/mine` before `/pets/{id}`). */
  literals: number;
  operations: Map<string, Operation>;
}

export type Match =
  | { kind: 'operation'; operation: Operation; params: Record<string, string> }
  | { kind: 'no-path' }
  | { kind: 'no-method'; path: string };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Which operation a request is: by the document's paths, built once into literal lookups and
 * segment templates, so that a request splits its path and compares segments, with no regular
 * expression made per request (a segment mixing text and parameters, `{name}.json`, is compiled at
 * load on the gateway's linear-time engine). The servers' base paths (`/v2` of
 * `http://host/v2`) are taken off the request path first, the longest that fits.
 */
export class OperationIndex {
  readonly #basePaths: string[];
  readonly #templates: Template[] = [];

  constructor(document: OpenAPIV3.Document) {
    this.#basePaths = basePaths(document.servers ?? []);
    for (const [path, item] of Object.entries(document.paths ?? {}) as [
      string,
      OpenAPIV3.PathItemObject | undefined,
    ][]) {
      if (item === undefined || item === null) continue;
      const operations = new Map<string, Operation>();
      for (const method of METHODS) {
        const definition = item[method] as Operation['definition'] | undefined;
        if (definition === undefined) continue;
        const own = (definition.parameters ?? []) as OpenAPIV3.ParameterObject[];
        const shared = ((item.parameters ?? []) as OpenAPIV3.ParameterObject[]).filter(
          (p) => !own.some((o) => o.name === p.name && o.in === p.in),
        );
        const parameters = [...own, ...shared];
        operations.set(method.toUpperCase(), {
          method,
          path,
          definition,
          parameters,
          backendOperation: { ...definition, path, method, parameters } as unknown as BackendOperation,
        });
      }
      const segments = splitPath(path).map(segmentOf);
      this.#templates.push({
        segments,
        literals: segments.filter((s) => s.kind === 'literal').length,
        operations,
      });
    }
    // Most literal segments first; among equals, the document's order.
    this.#templates.sort((a, b) => b.literals - a.literals);
  }

  match(method: string, requestPath: string): Match {
    const parts = splitPath(this.#relative(requestPath));
    let pathFound: string | undefined;
    for (const template of this.#templates) {
      const params = matchSegments(template.segments, parts);
      if (params === undefined) continue;
      const operation = template.operations.get(method.toUpperCase());
      if (operation !== undefined) return { kind: 'operation', operation, params };
      pathFound ??= [...template.operations.values()][0]?.path;
    }
    return pathFound === undefined ? { kind: 'no-path' } : { kind: 'no-method', path: pathFound };
  }

  /** The request path without the longest server base path it starts with (on a segment boundary). */
  #relative(path: string): string {
    for (const base of this.#basePaths) {
      if (path === base) return '/';
      if (path.startsWith(`${base}/`)) return path.slice(base.length);
    }
    return path;
  }
}

/** The base paths of the servers, longest first; `/` is no base path. */
function basePaths(servers: readonly OpenAPIV3.ServerObject[]): string[] {
  const out = new Set<string>();
  for (const server of servers) {
    // Variables take their defaults: `https://{region}.example.com/{version}`.
    const url = server.url.replace(
      /\{([^}]*)\}/g,
      (_: string, name: string) => server.variables?.[name]?.default ?? '',
    );
    let path: string;
    try {
      path = new URL(url, 'http://relative.invalid').pathname;
    } catch {
      continue;
    }
    path = path.replace(/\/+$/, '');
    if (path !== '') out.add(path);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** Segments of a path, without empty ones (a trailing slash does not count). */
function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment !== '');
}

const PARAMETER = /\{([^}]+)\}/g;

function segmentOf(text: string): Segment {
  const whole = /^\{([^}]+)\}$/.exec(text);
  if (whole) return { kind: 'parameter', name: whole[1]! };
  if (!text.includes('{')) return { kind: 'literal', text };
  const names: string[] = [];
  let pattern = '';
  let last = 0;
  for (const found of text.matchAll(PARAMETER)) {
    pattern += `${quote(text.slice(last, found.index))}([^/]+?)`;
    names.push(found[1]!);
    last = found.index + found[0].length;
  }
  pattern = `^${pattern}${quote(text.slice(last))}$`;
  return { kind: 'mixed', pattern: compileJavaRegex(pattern), names };
}

/** A literal in a Java pattern. */
function quote(text: string): string {
  return text === '' ? '' : `\\Q${text.replaceAll('\\E', '\\E\\\\E\\Q')}\\E`;
}

function matchSegments(
  segments: readonly Segment[],
  parts: readonly string[],
): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const part = parts[i]!;
    if (segment.kind === 'literal') {
      if (segment.text !== part) return undefined;
    } else if (segment.kind === 'parameter') {
      params[segment.name] = part;
    } else {
      const found = segment.pattern.exec(part);
      if (found === null) return undefined;
      segment.names.forEach((name, j) => {
        params[name] = found[j + 1]!;
      });
    }
  }
  return params;
}
