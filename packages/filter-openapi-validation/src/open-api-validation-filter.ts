import {
  type Context,
  defineHeaplet,
  ErrorCode,
  type Filter,
  type Handler,
  type Logger,
  PorticoError,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import { parseCookieHeaders } from '@portico/gateway-core/http-helpers';
import type { OpenAPIV3 } from 'openapi-types';
import { type CompiledDocument, compileDocument, readDocument } from './document.ts';
import { type Operation, OperationIndex } from './operations.ts';

/** Where the report of a failed validation goes, for the error handler (`${attributes.openApiValidationReport}`). */
export const REPORT_ATTRIBUTE = 'openApiValidationReport';

/** An Ajv error as openapi-backend gives it. */
interface ValidationError {
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** A validator openapi-backend compiled for an operation's request (parameters, body). */
type CompiledValidator = ((data: unknown) => boolean) & { errors?: ValidationError[] | null };

/**
 * Checks each request against the operation of an OpenAPI 3 document it is (path, method,
 * parameters, content type, body) and each response against what that operation declares (status,
 * content type, headers, body). A request that fails goes to `requestValidationErrorHandler` (by
 * default 400) and never upstream; a response that fails is logged, and replaced by
 * `responseValidationErrorHandler`'s answer (by default 503) when `failOnResponseViolation` is true.
 * The messages are in `attributes.openApiValidationReport` for those handlers.
 *
 * Everything is compiled at load. A body is read only when the operation (or, for a response, its
 * status) declares a JSON schema for it, and then within the message's buffered-body limit.
 */
export class OpenApiValidationFilter implements Filter {
  readonly #api: CompiledDocument;
  readonly #index: OperationIndex;
  readonly #failOnResponseViolation: boolean;
  readonly #onRequestViolation: Handler;
  readonly #onResponseViolation: Handler;
  readonly #logger: Logger;

  constructor(options: {
    api: CompiledDocument;
    failOnResponseViolation: boolean;
    requestValidationErrorHandler?: Handler | undefined;
    responseValidationErrorHandler?: Handler | undefined;
    logger: Logger;
  }) {
    this.#api = options.api;
    this.#index = new OperationIndex(options.api.definition as OpenAPIV3.Document);
    this.#failOnResponseViolation = options.failOnResponseViolation;
    this.#onRequestViolation = options.requestValidationErrorHandler ?? defaultHandler(400, 'Request');
    this.#onResponseViolation = options.responseValidationErrorHandler ?? defaultHandler(503, 'Response');
    this.#logger = options.logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const match = this.#index.match(request.method, request.uri.path);
    if (match.kind !== 'operation') {
      const report =
        match.kind === 'no-path'
          ? [`no path of the document matches '${request.uri.path}'`]
          : [`${request.method} is not an operation of the path '${match.path}'`];
      return this.#refuseRequest(context, request, report);
    }
    const { operation } = match;
    const requestReport = await this.#checkRequest(request, operation, match.params);
    if (requestReport.length > 0) return this.#refuseRequest(context, request, requestReport);
    const response = await next.handle(context, request);
    const responseReport = await this.#checkResponse(response, operation);
    if (responseReport.length === 0) return response;
    this.#logger.warn('the response does not match the OpenAPI document', {
      method: request.method,
      path: request.uri.path,
      status: response.status,
      report: responseReport,
    });
    if (!this.#failOnResponseViolation) return response;
    await response.entity.dispose();
    context.attributes[REPORT_ATTRIBUTE] = responseReport;
    return this.#onResponseViolation.handle(context, request);
  }

  #refuseRequest(context: Context, request: Request, report: string[]): Promise<Response> {
    this.#logger.info('the request does not match the OpenAPI document', {
      method: request.method,
      path: request.uri.path,
      report,
    });
    context.attributes[REPORT_ATTRIBUTE] = report;
    return this.#onRequestViolation.handle(context, request);
  }

  async #checkRequest(
    request: Request,
    operation: Operation,
    params: Record<string, string>,
  ): Promise<string[]> {
    const report: string[] = [];
    const body = operation.definition.requestBody as OpenAPIV3.RequestBodyObject | undefined;
    const parameters: Record<string, unknown> = {
      path: params,
      query: queryOf(request.uri.rawQuery, operation.parameters),
      header: headersOf(request),
      cookie: cookiesOf(request),
    };
    const contentType = mediaType(request.headers.get('content-type'));
    const hasBody = !request.entity.isEmpty;
    if (body !== undefined && hasBody) {
      const declared = Object.keys(body.content ?? {});
      if (
        contentType !== undefined &&
        declared.length > 0 &&
        !declared.some((d) => mediaMatches(d, contentType))
      )
        report.push(
          `the content type '${contentType}' is not one the operation accepts (${declared.join(', ')})`,
        );
      else if (hasJsonSchema(body.content, contentType ?? 'application/json')) {
        const read = await readJson(request.entity.bytes());
        if ('problem' in read) report.push(`the request body is not JSON: ${read.problem}`);
        else parameters.requestBody = read.value;
      }
    } else if (body?.required === true && !hasBody) {
      report.push('the operation requires a request body');
    }
    const validators = (
      this.#api.validator as unknown as { getRequestValidatorsForOperation(id: string): CompiledValidator[] }
    ).getRequestValidatorsForOperation(operation.definition.operationId);
    // openapi-backend compiles the body's validator (when the operation has a JSON schema) before
    // the parameters' one; the body's runs only on a body read as JSON (its absence is checked above).
    const paramsValidator = validators.at(-1);
    if (paramsValidator !== undefined && !paramsValidator(parameters))
      report.push(...messages(paramsValidator.errors));
    const bodyValidator = validators.length > 1 ? validators[0] : undefined;
    if (bodyValidator !== undefined && 'requestBody' in parameters && !bodyValidator(parameters))
      report.push(...messages(bodyValidator.errors));
    return [...new Set(report)];
  }

  async #checkResponse(response: Response, operation: Operation): Promise<string[]> {
    const responses = operation.definition.responses ?? {};
    const declared = declaredResponse(responses, response.status);
    if (declared === undefined) return [`the status ${response.status} is not a response of the operation`];
    const report: string[] = [];
    const contentType = mediaType(response.headers.get('content-type'));
    const media = Object.keys(declared.content ?? {});
    const hasBody = !response.entity.isEmpty;
    if (
      hasBody &&
      contentType !== undefined &&
      media.length > 0 &&
      !media.some((m) => mediaMatches(m, contentType))
    )
      report.push(`the content type '${contentType}' is not one the response declares (${media.join(', ')})`);
    // openapi-backend's header validators check the types; which headers are required, this does.
    for (const [name, header] of Object.entries(declared.headers ?? {})) {
      if ((header as OpenAPIV3.HeaderObject).required === true && !response.headers.has(name))
        report.push(`the header '${name}' is required`);
    }
    const headers = this.#api.validator.validateResponseHeaders(
      headersObject(response),
      operation.backendOperation,
      {
        statusCode: response.status,
      },
    );
    report.push(...messages(headers.errors as ValidationError[] | null));
    if (
      hasBody &&
      report.length === 0 &&
      hasJsonSchema(declared.content, contentType ?? 'application/json')
    ) {
      const read = await readJson(response.entity.bytes());
      if ('problem' in read) report.push(`the response body is not JSON: ${read.problem}`);
      else {
        const body = this.#api.validator.validateResponse(
          read.value,
          operation.backendOperation,
          response.status,
        );
        report.push(...messages(body.errors as ValidationError[] | null, 'response'));
      }
    }
    return report;
  }
}

/** The incumbents' own answer to a failed validation: the status and `<Request|Response> validation failed: [...]`. */
function defaultHandler(status: number, what: 'Request' | 'Response'): Handler {
  return {
    handle: async (context) =>
      Response.text(
        status,
        `${what} validation failed: [${(context.attributes[REPORT_ATTRIBUTE] as string[]).join(', ')}]`,
      ),
  };
}

/** The response object for a status: the status itself, its range (`2XX`), else `default`. */
function declaredResponse(
  responses: OpenAPIV3.ResponsesObject,
  status: number,
): OpenAPIV3.ResponseObject | undefined {
  return (responses[String(status)] ??
    responses[`${Math.floor(status / 100)}XX`] ??
    responses[`${Math.floor(status / 100)}xx`] ??
    responses.default) as OpenAPIV3.ResponseObject | undefined;
}

function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type === '' ? undefined : type;
}

/** Whether `declared` (`application/json`, `application/*`, `*\/*`) covers `actual`. */
function mediaMatches(declared: string, actual: string): boolean {
  const d = declared.split(';')[0]!.trim().toLowerCase();
  if (d === actual || d === '*/*') return true;
  return d.endsWith('/*') && actual.startsWith(d.slice(0, -1));
}

function isJson(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/** Whether the body is JSON and what is declared for it has a schema (what the validators check). */
function hasJsonSchema(
  content: Record<string, OpenAPIV3.MediaTypeObject> | undefined,
  type: string,
): boolean {
  return isJson(type) && content?.['application/json']?.schema !== undefined;
}

async function readJson(bytes: Promise<Buffer>): Promise<{ value: unknown } | { problem: string }> {
  const text = (await bytes).toString('utf8');
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

/** A query component as a form sends it (`+` a space); a malformed escape is kept as it came. */
function decodeComponent(text: string): string {
  const spaced = text.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** The query as the parameter validators read it: one value, or every value for an array parameter. */
function queryOf(
  rawQuery: string | null,
  parameters: readonly OpenAPIV3.ParameterObject[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (rawQuery === null || rawQuery === '') return out;
  const values = new Map<string, string[]>();
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    // Kept escaped until a non-exploded array is split: an escaped delimiter is part of an item.
    const list = values.get(name) ?? [];
    list.push(eq < 0 ? '' : pair.slice(eq + 1));
    values.set(name, list);
  }
  for (const [name, raw] of values) {
    const parameter = parameters.find((p) => p.in === 'query' && p.name === name);
    const schema = parameter?.schema as OpenAPIV3.SchemaObject | undefined;
    const list = raw.map(decodeComponent);
    if (schema?.type === 'array') {
      // A space arrives as `+` or `%20`: split on both before decoding.
      const delimiter =
        parameter?.style === 'pipeDelimited' ? '|' : parameter?.style === 'spaceDelimited' ? /\+|%20/ : ',';
      out[name] =
        parameter?.explode === false ? raw.flatMap((v) => v.split(delimiter).map(decodeComponent)) : list;
    } else if (parameter?.content?.['application/json'] !== undefined) {
      try {
        out[name] = JSON.parse(list[0]!);
      } catch {
        out[name] = list[0];
      }
    } else {
      out[name] = list.length === 1 ? list[0] : list;
    }
  }
  return out;
}

/** Header fields by lower-case name, repeated ones joined as one field. */
function headersOf(request: Request): Record<string, string> {
  return headersObject(request);
}

function headersObject(message: Request | Response): Record<string, string> {
  const out: Record<string, string> = {};
  message.headers.forEach((name, values) => {
    out[name.toLowerCase()] = values.join(', ');
  });
  return out;
}

function cookiesOf(request: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, cookies] of Object.entries(parseCookieHeaders(request.headers.getAll('cookie'))))
    if (cookies[0] !== undefined) out[name] = cookies[0].value;
  return out;
}

/** One line per error: where (`query.status`, `requestBody.name`) and what is wrong. */
function messages(errors: readonly ValidationError[] | null | undefined, root?: string): string[] {
  return (errors ?? []).map((error) => {
    const where = [root, ...error.instancePath.split('/').filter((p) => p !== '')].filter(Boolean).join('.');
    const allowed = error.params?.allowedValues;
    const extra = Array.isArray(allowed) ? ` (${allowed.join(', ')})` : '';
    const missing = error.params?.missingProperty;
    const at = typeof missing === 'string' ? `${where === '' ? '' : `${where}.`}${missing}` : where;
    return `${at === '' ? 'the message' : at} ${error.message ?? 'is not valid'}${extra}`;
  });
}

export const OpenApiValidationFilterHeaplet = defineHeaplet({
  type: 'OpenApiValidationFilter',
  kind: 'filter',
  config: s.object({
    // The document's text (JSON or YAML), usually `${read('...')}`: read, parsed and checked at load.
    spec: s.string().refine((text) => {
      const read = readDocument(text);
      return 'problem' in read ? read.problem : undefined;
    }, 'the text of an OpenAPI 3.0 or 3.1 document (JSON or YAML)'),
    failOnResponseViolation: s.boolean().default(false),
    requestValidationErrorHandler: s.ref<Handler>('handler').optional(),
    responseValidationErrorHandler: s.ref<Handler>('handler').optional(),
  }),
  create: async ({ config, logger, configAt }) => {
    const read = readDocument(config.spec);
    if ('problem' in read) throw new PorticoError(ErrorCode.CONFIG, read.problem, configAt('spec'));
    let api: CompiledDocument;
    try {
      api = await compileDocument(read.document, logger);
    } catch (error) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `the OpenAPI document is not valid: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`,
        { ...configAt('spec'), expected: 'an OpenAPI 3.0 or 3.1 document', cause: error },
      );
    }
    return new OpenApiValidationFilter({
      api,
      failOnResponseViolation: config.failOnResponseViolation,
      requestValidationErrorHandler: config.requestValidationErrorHandler,
      responseValidationErrorHandler: config.responseValidationErrorHandler,
      logger,
    });
  },
});
