import {
  bindingsFor,
  type Context,
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  PorticoError,
  type Request,
  type Response,
  Schema,
  s,
  Uri,
} from '@portico/gateway-core';
import { fail, INVALID, type ParseContext } from '@portico/gateway-core/schema';

const EXPECTED = 'an absolute URI with a scheme and a host, such as "https://app.example.com:8443"';

/**
 * The base a text names, or what is wrong with it. The text is not repeated: it may come from the
 * environment (a token, `${env[...]}`) and carry credentials (`https://user:password@host`).
 */
export function parseBase(text: string): Uri | string {
  const base = baseOrFault(text);
  return typeof base === 'string' ? `the value (${text.length} characters, not shown) ${base}` : base;
}

function baseOrFault(text: string): Uri | string {
  let uri: Uri;
  try {
    uri = Uri.parse(text);
  } catch {
    return 'is not a URI';
  }
  return uri.scheme && uri.host ? uri : 'has no scheme or no host';
}

/**
 * Sends the requests reaching the decorated object to another base (`"baseURI":
 * "https://app.example.com:8443"`): scheme, host and port are replaced (no port means the scheme's
 * default), while path, query, fragment and user information stay. A decoration value that is not a
 * string is ignored, as the spec says. A value with `${...}` is evaluated per request.
 */
/**
 * A `"baseURI"` decoration: a literal base, read and checked at load; a `${...}` one, compiled and
 * evaluated per request; any value that is not a string, ignored (undefined), as the spec says.
 */
export class BaseUriDecorationSchema extends Schema<Uri | Expression<string> | undefined> {
  readonly expected = EXPECTED;
  readonly #expression = s.expression('string');

  parseValue(
    value: unknown,
    path: string,
    ctx: ParseContext,
  ): Uri | Expression<string> | undefined | typeof INVALID {
    if (typeof value !== 'string') return undefined;
    const expression = this.#expression.parseValue(value, path, ctx);
    if (expression === INVALID || !expression.isConstant) return expression;
    const base = parseBase(expression.evaluate() ?? '');
    return typeof base === 'string' ? fail(ctx, path, `baseURI: ${base}`, EXPECTED) : base;
  }

  jsonSchema() {
    return { type: 'string', format: 'uri' };
  }
}

export class BaseUriDecorator implements Decorator {
  /** `decoration` is the base, read by the heaplet's `decoration` schema (undefined: ignored). */
  decorate(target: unknown, decoration: Uri | Expression<string> | undefined, info: DecorationInfo): unknown {
    if (decoration === undefined) return target;
    // Synchronous for a literal base; a `${...}` one is evaluated settled (it may read a lazy map).
    const rebase: (context: Context, request: Request) => Promise<void> | undefined =
      decoration instanceof Uri
        ? (_context, request) => {
            rebaseOnto(request, decoration);
            return undefined;
          }
        : (context, request) =>
            evaluated(decoration, context, request).then((base) => rebaseOnto(request, base));
    if (info.kind === 'filter') {
      const filter = target as Filter;
      return {
        filter: async (context: Context, request: Request, next: Handler): Promise<Response> => {
          const pending = rebase(context, request);
          if (pending) await pending;
          return filter.filter(context, request, next);
        },
      } satisfies Filter;
    }
    if (info.kind === 'handler') {
      const handler = target as Handler;
      return {
        handle: async (context: Context, request: Request): Promise<Response> => {
          const pending = rebase(context, request);
          if (pending) await pending;
          return handler.handle(context, request);
        },
      } satisfies Handler;
    }
    return target;
  }
}

function rebaseOnto(request: Request, base: Uri): void {
  request.uri = request.uri.with({ scheme: base.scheme, host: base.host, port: base.port });
}

/** The base a run-time expression gives for this request; a bad one fails the request (500, logged). */
async function evaluated(expression: Expression<string>, context: Context, request: Request): Promise<Uri> {
  const text = await evaluateSettled(expression, bindingsFor(context, request));
  // The expression's text is the configuration's own; what it gave is not shown (see parseBase).
  const base = text === null ? 'evaluated to null' : baseOrFault(text);
  if (typeof base === 'string') {
    const gave = text === null ? '' : ` gave a value (${text.length} characters, not shown) that`;
    throw new PorticoError(ErrorCode.CONFIG, `baseURI: ${expression.text}${gave} ${base}`, {
      expected: EXPECTED,
    });
  }
  return base;
}

export const BaseUriDecoratorHeaplet = defineHeaplet({
  type: 'BaseUriDecorator',
  kind: 'decorator',
  config: s.object({}),
  decoration: new BaseUriDecorationSchema(),
  create: () => new BaseUriDecorator(),
});
