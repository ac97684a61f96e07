import { pipeline } from 'node:stream';
import {
  type Context,
  defineHeaplet,
  ErrorCode,
  type Filter,
  type Handler,
  isPorticoError,
  type Logger,
  type Request,
  Response,
  s,
} from '@portico/gateway-core';
import {
  errorResponse,
  filterServerPayload,
  INVALID_REQUEST,
  idKey,
  isListMethod,
  isMessage,
  isRequest,
  type JsonObject,
  judgeRequest,
  PARSE_ERROR,
} from './json-rpc.ts';
import { FeaturePolicy } from './policy.ts';
import { messageEvent, SseRewriter } from './sse.ts';
import { templateProblem } from './uri-template.ts';

const SESSION_HEADER = 'Mcp-Session-Id';

/** What one POST carried, as far as its answer is concerned. */
interface Posted {
  /** The id of each request forwarded, to its method: which responses are lists, and of what. */
  requests: Map<string, string>;
  /** Whether a response to a list request may come back (else the answer passes untouched). */
  lists: boolean;
  /** The gateway's own answers to the refused members of a batch, to go out with the server's. */
  refusals: JsonObject[];
}

/**
 * MCPServerFeaturesFilter: allow and deny lists for the tools, prompts, resources and resource
 * templates an MCP server offers through Streamable HTTP. A call to a feature the policy refuses
 * is answered by the gateway with a JSON-RPC error and never reaches the server; the four list
 * results lose the features it refuses, in JSON answers and in event streams alike, event by
 * event as the stream flows. Every other message passes as it came.
 */
export class MCPServerFeaturesFilter implements Filter {
  readonly #policy: FeaturePolicy;
  readonly #logger: Logger;

  constructor(policy: FeaturePolicy, logger: Logger) {
    this.#policy = policy;
    this.#logger = logger;
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (request.method !== 'POST') {
      // A GET opens the server's own stream (or resumes one): its responses are judged by shape.
      if (request.method === 'GET') request.headers.delete('Accept-Encoding');
      const response = await next.handle(context, request);
      if (request.method === 'GET' && isEventStream(response)) this.#filterStream(response, undefined, []);
      return response;
    }
    // Bounded by the server's maxBufferedBodySize: past it, 413, as for every body a filter reads.
    const body = await request.entity.text();
    let payload: unknown;
    try {
      payload = JSON.parse(body);
    } catch {
      return ownAnswer(request, 400, errorResponse(null, PARSE_ERROR, 'Parse error'));
    }
    const batch = Array.isArray(payload);
    const members: unknown[] = Array.isArray(payload) ? payload : [payload];
    if (members.length === 0 || !members.every(isMessage))
      return ownAnswer(request, 400, errorResponse(null, INVALID_REQUEST, 'Invalid Request'));
    const posted: Posted = { requests: new Map(), lists: false, refusals: [] };
    const forwarded: JsonObject[] = [];
    for (const message of members as JsonObject[]) {
      const refusal = judgeRequest(message, this.#policy);
      if (refusal !== undefined) {
        this.#logger.warn('an MCP call to a feature the policy refuses was answered by the gateway', {
          method: refusal.method,
          feature: refusal.feature,
        });
        posted.refusals.push(refusal.response);
        continue;
      }
      forwarded.push(message);
      if (!isRequest(message)) continue;
      posted.requests.set(idKey(message.id), message.method as string);
      if (isListMethod(message.method)) posted.lists = true;
    }
    if (!batch && posted.refusals.length > 0) return ownAnswer(request, 200, posted.refusals[0]);
    if (forwarded.length === 0) return ownAnswer(request, 200, posted.refusals);
    // The members that go on, still a batch: the server answers a batch with one.
    if (posted.refusals.length > 0) request.entity.setContent(JSON.stringify(forwarded));
    // An answer the filter reads must come uncompressed.
    if (posted.lists || posted.refusals.length > 0) request.headers.delete('Accept-Encoding');
    const response = await next.handle(context, request);
    if (!posted.lists && posted.refusals.length === 0) return response;
    return this.#filterAnswer(request, response, posted);
  }

  async #filterAnswer(request: Request, response: Response, posted: Posted): Promise<Response> {
    if (response.status < 200 || response.status > 299) return response;
    if (isEventStream(response)) {
      this.#filterStream(response, posted.requests, posted.refusals);
      return response;
    }
    if (!mediaType(response).endsWith('json')) {
      // Nothing the server said back (202 to notifications and responses): the refusals alone.
      if (posted.refusals.length === 0) return response;
      response.entity.discard();
      return ownAnswer(request, 200, posted.refusals, response);
    }
    let payload: unknown;
    try {
      payload = JSON.parse(await response.entity.text());
    } catch (error) {
      this.#logger.warn('the MCP server answered with a body the filter cannot read as JSON', {
        error: isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE) ? error.message : String(error),
      });
      response.entity.discard();
      return Response.text(502, 'Bad Gateway');
    }
    let filtered = filterServerPayload(payload, this.#policy, posted.requests);
    if (posted.refusals.length > 0)
      filtered = [...(Array.isArray(filtered) ? filtered : [filtered]), ...posted.refusals];
    if (filtered === payload) return response;
    const text = JSON.stringify(filtered);
    response.entity.setContent(text);
    response.headers.set('Content-Length', String(Buffer.byteLength(text)));
    return response;
  }

  /** Rewrites an event stream as it flows, the gateway's own answers first. */
  #filterStream(
    response: Response,
    requests: ReadonlyMap<string, string> | undefined,
    refusals: readonly JsonObject[],
  ): void {
    const policy = this.#policy;
    const rewriter = new SseRewriter(
      (data) => {
        let payload: unknown;
        try {
          payload = JSON.parse(data);
        } catch {
          // Not a JSON-RPC message, so not a list either.
          return undefined;
        }
        const filtered = filterServerPayload(payload, policy, requests);
        return filtered === payload ? undefined : JSON.stringify(filtered);
      },
      response.entity.maxBytes,
      refusals.map(messageEvent).join(''),
    );
    const source = response.entity.stream();
    if (source === null) rewriter.end();
    else
      pipeline(source, rewriter, (error) => {
        if (error && !isPrematureClose(error))
          this.#logger.warn("the MCP server's event stream could not be filtered", { error: String(error) });
      });
    response.entity.setContent(rewriter);
    response.entity.declaredLength = undefined;
    response.headers.delete('Content-Length');
  }
}

function isPrematureClose(error: Error): boolean {
  return (error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE';
}

function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function isEventStream(response: Response): boolean {
  return response.status >= 200 && response.status <= 299 && mediaType(response) === 'text/event-stream';
}

/**
 * The gateway's own JSON-RPC answer, with the session the client named (or the server's answer
 * carried) kept, so that a client that reads the session from every answer keeps it.
 */
function ownAnswer(request: Request, status: number, payload: unknown, server?: Response): Response {
  const answer = Response.text(status, JSON.stringify(payload), 'application/json');
  const session = server?.headers.get(SESSION_HEADER) ?? request.headers.get(SESSION_HEADER);
  if (session !== undefined) answer.headers.set(SESSION_HEADER, session);
  return answer;
}

const templateString = s
  .string()
  .refine((template) => templateProblem(template), 'a URI template (RFC 6570), such as "file:///{path}"');

/** An `allow` or `deny` object: every list optional, empty when left out. */
const featureLists = () =>
  s
    .object({
      tools: s.array(s.string()).default(() => []),
      prompts: s.array(s.string()).default(() => []),
      resources: s.array(s.string()).default(() => []),
      'resources/templates': s.array(templateString).default(() => []),
    })
    .default(() => ({ tools: [], prompts: [], resources: [], 'resources/templates': [] }));

export const MCPServerFeaturesFilterHeaplet = defineHeaplet({
  type: 'MCPServerFeaturesFilter',
  // The name the incumbent's documentation writes in its examples (and never registered).
  aliases: ['MCPFeaturesFilter'],
  kind: 'filter',
  config: s.object({
    allow: featureLists(),
    deny: featureLists(),
  }),
  create: ({ config, logger }) =>
    new MCPServerFeaturesFilter(new FeaturePolicy(config.allow, config.deny), logger),
});
