import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { startHttpServer } from './http-server.ts';

/**
 * A real MCP server (the MCP TypeScript SDK's `McpServer` on its Streamable HTTP transport) on a
 * free loopback port, for tests of what sits between an MCP client and a server. It answers in
 * JSON (`json`) or in an event stream per POST (`sse`), keeps sessions (`Mcp-Session-Id`), and
 * records every JSON-RPC message that reached it, so that a test can tell what never did.
 */
export interface TestMcpServer {
  /** The MCP endpoint: `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Every JSON-RPC message the server received, in order (a batch's members one by one). */
  received: Record<string, unknown>[];
  /** The `Mcp-Session-Id` of each POST that carried one. */
  sessions: string[];
  /** The names (or URIs) of the features the server ran: `tool:echo`, `prompt:greeting`, `resource:memo://public`. */
  ran: string[];
  close(): Promise<void>;
}

export interface TestMcpServerOptions {
  mode: 'json' | 'sse';
  /** Tools `tool-01` … `tool-NN` besides the named ones (a long tools/list). */
  extraTools?: number;
}

/** The features the server offers. */
export const MCP_FEATURES = {
  tools: ['echo', 'add', 'delete_everything', 'read_secrets'],
  prompts: ['greeting', 'secret_prompt'],
  resources: ['memo://public', 'memo://internal', 'memo://secret'],
  templates: ['users://{id}/profile', 'files:///{+path}'],
};

export async function startMcpServer(options: TestMcpServerOptions): Promise<TestMcpServer> {
  const received: Record<string, unknown>[] = [];
  const sessions: string[] = [];
  const ran: string[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const build = (): McpServer => {
    const server = new McpServer({ name: 'portico-test-mcp', version: '1.0.0' });
    for (const name of MCP_FEATURES.tools)
      server.registerTool(
        name,
        { description: `the ${name} tool`, inputSchema: { text: z.string().optional() } },
        async ({ text }) => {
          ran.push(`tool:${name}`);
          return { content: [{ type: 'text', text: `${name}: ${text ?? ''}` }] };
        },
      );
    for (let i = 1; i <= (options.extraTools ?? 0); i++) {
      const name = `tool-${String(i).padStart(2, '0')}`;
      server.registerTool(
        name,
        {
          description: `generated tool number ${i}, which takes a query and a limit`,
          inputSchema: { query: z.string(), limit: z.number().int().optional() },
        },
        async () => ({ content: [{ type: 'text', text: name }] }),
      );
    }
    for (const name of MCP_FEATURES.prompts)
      server.registerPrompt(
        name,
        { description: `the ${name} prompt`, argsSchema: { who: z.string().optional() } },
        ({ who }) => {
          ran.push(`prompt:${name}`);
          return {
            messages: [{ role: 'user', content: { type: 'text', text: `${name} for ${who ?? 'you'}` } }],
          };
        },
      );
    for (const uri of MCP_FEATURES.resources)
      server.registerResource(uri.slice('memo://'.length), uri, { mimeType: 'text/plain' }, async () => {
        ran.push(`resource:${uri}`);
        return { contents: [{ uri, text: `contents of ${uri}` }] };
      });
    for (const [name, template] of [
      ['profile', MCP_FEATURES.templates[0]!],
      ['file', MCP_FEATURES.templates[1]!],
    ] as const)
      server.registerResource(name, new ResourceTemplate(template, { list: undefined }), {}, async (uri) => {
        ran.push(`resource:${uri.href}`);
        return { contents: [{ uri: uri.href, text: name }] };
      });
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(text);
        for (const message of Array.isArray(body) ? body : [body]) received.push(message);
      } catch {
        body = undefined;
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') sessions.push(sessionId);
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (typeof sessionId === 'string') {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32001, message: 'Session not found' },
          }),
        );
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.mode === 'json',
        onsessioninitialized: (id) => {
          transports.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await build().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  };

  const http = await startHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  return {
    url: `${http.url}/mcp`,
    received,
    sessions,
    ran,
    close: async () => {
      for (const transport of transports.values()) await transport.close();
      await http.close();
    },
  };
}
