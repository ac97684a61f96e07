import { type Handler, Request, type Response } from '@portico/gateway-core';
import { pluginHeap, testContext } from '@portico/gateway-core/testing';
import plugin from './index.ts';

export const FILE = 'routes/mcp.json';

/**
 * A route's chain as the gateway builds it from a file: the filter (under `type`, the alias
 * included) in front of a real ClientHandler to the server at `url`.
 */
export async function chainTo(config: unknown, type = 'MCPServerFeaturesFilter') {
  const { heap, logger } = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: [
      { name: 'Features', type, ...(config === undefined ? {} : { config }) },
      { name: 'Main', type: 'Chain', config: { filters: ['Features'], handler: { type: 'ClientHandler' } } },
    ],
  });
  const chain = await heap.get<Handler>('Main', 'handler');
  return { heap, logger, chain };
}

export interface Exchange {
  response: Response;
  status: number;
  /** The JSON-RPC messages of the answer, from a JSON body or an event stream's `data`. */
  messages: Record<string, unknown>[];
  /** The body as text. */
  text: string;
}

/** A POST of `body` (a JSON value, or text sent as it is) to the MCP endpoint at `url`. */
export async function post(
  chain: Handler,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Exchange> {
  const request = new Request({
    method: 'POST',
    uri: url,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-06-18',
      ...headers,
    },
    entity: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const response = await chain.handle(testContext(), request);
  const text = await response.entity.text();
  return { response, status: response.status, text, messages: messagesOf(response, text) };
}

export function messagesOf(response: Response, text: string): Record<string, unknown>[] {
  if (text === '') return [];
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    if (!type.includes('json')) return [];
    const value = JSON.parse(text) as unknown;
    return (Array.isArray(value) ? value : [value]) as Record<string, unknown>[];
  }
  const out: Record<string, unknown>[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '') continue;
    const value = JSON.parse(data) as unknown;
    out.push(...((Array.isArray(value) ? value : [value]) as Record<string, unknown>[]));
  }
  return out;
}

/** Opens an MCP session through `chain`: initialize, then the initialized notification. */
export async function initialize(chain: Handler, url: string): Promise<string> {
  const init = await post(chain, url, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  });
  const session = init.response.headers.get('mcp-session-id');
  if (session === undefined) throw new Error(`no session: ${init.status} ${init.text}`);
  await post(
    chain,
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'Mcp-Session-Id': session },
  );
  return session;
}

/** A response's `result`, which the test expects to be there. */
export function resultOf(message: Record<string, unknown> | undefined): Record<string, unknown> {
  const result = message?.result;
  if (typeof result !== 'object' || result === null)
    throw new Error(`no result in ${JSON.stringify(message)}`);
  return result as Record<string, unknown>;
}
