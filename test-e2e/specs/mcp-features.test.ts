import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode as McpErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { startMcpServer, type TestMcpServer } from '@portico/test-support/mcp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { chainRoute } from '../support/routes.ts';

/**
 * MCPServerFeaturesFilter in the real `portico start`, between the MCP TypeScript SDK's client
 * and real MCP servers: the SDK's own server answering in JSON and in event streams, and the
 * reference server-everything in its Streamable HTTP mode.
 */

const SDK_POLICY = {
  allow: {
    tools: ['echo', 'add', 'delete_everything'],
    prompts: ['greeting'],
    resources: ['memo://public'],
    'resources/templates': ['users://{id}/profile'],
  },
  deny: { tools: ['delete_everything'], prompts: ['secret_prompt'], resources: ['memo://secret'] },
};

/** A free loopback port, for a server that takes its port from the environment. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The reference server, as its README runs it: `server-everything streamableHttp`, on PORT. */
async function startEverything(): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const require = createRequire(import.meta.url);
  const main = path.join(
    path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist/index.js',
  );
  const child = spawn(process.execPath, [main, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start:\n${output}`)), 20_000);
    const check = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on port ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}:\n${output}`)));
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'portico-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** What a refused call fails with: the JSON-RPC error the gateway answered. */
const refusal = (message: string) =>
  expect.objectContaining({ code: McpErrorCode.InvalidParams, message: expect.stringContaining(message) });

describe('MCPServerFeaturesFilter through portico start', () => {
  let json: TestMcpServer;
  let sse: TestMcpServer;
  let everything: { url: string; process: ChildProcess };
  let everythingFeatures: { tools: string[]; prompts: string[]; resources: string[]; templates: string[] };
  let gw: RunningGateway;

  beforeAll(async () => {
    [json, sse, everything] = await Promise.all([
      startMcpServer({ mode: 'json' }),
      startMcpServer({ mode: 'sse' }),
      startEverything(),
    ]);
    // What server-everything offers, asked of it directly: the policy below is written against it.
    const direct = await connect(`${everything.url}/mcp`);
    everythingFeatures = {
      tools: (await direct.listTools()).tools.map((t) => t.name),
      prompts: (await direct.listPrompts()).prompts.map((p) => p.name),
      resources: (await direct.listResources()).resources.map((r) => r.uri),
      templates: (await direct.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
    };
    await direct.close();
    const base = instanceDirectory({
      'config/routes/10-json.json': chainRoute(
        "${find(request.uri.path, '^/json/')}",
        [{ type: 'MCPServerFeaturesFilter', config: SDK_POLICY }],
        { baseURI: json.url.replace(/\/mcp$/, '') },
      ),
      'config/routes/20-sse.json': chainRoute(
        "${find(request.uri.path, '^/sse/')}",
        // The name the incumbent's documentation writes.
        [{ type: 'MCPFeaturesFilter', config: SDK_POLICY }],
        { baseURI: sse.url.replace(/\/mcp$/, '') },
      ),
      'config/routes/30-everything.json': chainRoute(
        "${request.uri.path == '/mcp'}",
        [
          {
            type: 'MCPServerFeaturesFilter',
            config: {
              allow: { tools: ['echo', 'get-sum', 'get-env'], prompts: ['simple-prompt', 'args-prompt'] },
              deny: {
                tools: ['get-env'],
                prompts: ['args-prompt'],
                resources: [everythingFeatures.resources[0]],
                'resources/templates': ['demo://resource/dynamic/blob/{resourceId}'],
              },
            },
          },
        ],
        { baseURI: everything.url },
      ),
    });
    gw = await startGateway({ base });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    everything?.process.kill();
    await Promise.all([json?.close(), sse?.close()]);
  });

  describe.each(['json', 'sse'] as const)("the SDK's client and server (%s answers)", (mode) => {
    const server = () => (mode === 'json' ? json : sse);

    it('lists exactly the allowed tools, prompts, resources and templates', async () => {
      const client = await connect(`${gw.url}/${mode}/mcp`);
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo', 'add']);
        expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greeting']);
        expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['memo://public']);
        expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
          'users://{id}/profile',
        ]);
      } finally {
        await client.close();
      }
    });

    it('fails denied calls with the JSON-RPC error; the server never sees them', async () => {
      const client = await connect(`${gw.url}/${mode}/mcp`);
      try {
        await expect(client.callTool({ name: 'delete_everything', arguments: {} })).rejects.toEqual(
          refusal('Unknown tool: delete_everything'),
        );
        await expect(client.callTool({ name: 'read_secrets', arguments: {} })).rejects.toEqual(
          refusal('Unknown tool: read_secrets'),
        );
        await expect(client.getPrompt({ name: 'secret_prompt' })).rejects.toEqual(refusal('Unknown prompt'));
        await expect(client.readResource({ uri: 'memo://secret' })).rejects.toEqual(
          refusal('Unknown resource'),
        );
        await expect(client.readResource({ uri: 'memo://internal' })).rejects.toEqual(
          refusal('Unknown resource'),
        );
        const calls = server().received.filter((m) =>
          ['tools/call', 'prompts/get', 'resources/read'].includes(m.method as string),
        );
        expect(calls).toEqual([]);
        expect(server().ran).toEqual([]);
      } finally {
        await client.close();
      }
    });

    it('lets allowed calls through, in the session the server opened', async () => {
      const client = await connect(`${gw.url}/${mode}/mcp`);
      try {
        const result = await client.callTool({ name: 'echo', arguments: { text: 'through portico' } });
        expect(result.content).toEqual([{ type: 'text', text: 'echo: through portico' }]);
        const profile = await client.readResource({ uri: 'users://7/profile' });
        expect(profile.contents[0]?.uri).toBe('users://7/profile');
        expect(server().ran).toEqual(['tool:echo', 'resource:users://7/profile']);
        // The server's session header went back and forth: every request after initialize carried it.
        expect(server().sessions.length).toBeGreaterThan(2);
      } finally {
        await client.close();
        server().ran.length = 0;
      }
    });
  });

  describe('the reference server-everything', () => {
    it('lists exactly the allowed features, deny winning', async () => {
      const client = await connect(`${gw.url}/mcp`);
      try {
        expect(everythingFeatures.tools).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-env']));
        expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['echo', 'get-sum']);
        expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['simple-prompt']);
        expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(
          everythingFeatures.resources.slice(1),
        );
        expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(
          everythingFeatures.templates.filter((t) => t !== 'demo://resource/dynamic/blob/{resourceId}'),
        );
      } finally {
        await client.close();
      }
    });

    it('refuses denied calls with the JSON-RPC error and serves allowed ones', async () => {
      const client = await connect(`${gw.url}/mcp`);
      try {
        await expect(client.callTool({ name: 'get-env', arguments: {} })).rejects.toEqual(
          refusal('Unknown tool: get-env'),
        );
        await expect(client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } })).rejects.toEqual(
          refusal('Unknown prompt: args-prompt'),
        );
        await expect(client.readResource({ uri: everythingFeatures.resources[0]! })).rejects.toEqual(
          refusal('Unknown resource'),
        );
        await expect(client.readResource({ uri: 'demo://resource/dynamic/blob/1' })).rejects.toEqual(
          refusal('Unknown resource'),
        );
        const echo = await client.callTool({ name: 'echo', arguments: { message: 'hello' } });
        expect(JSON.stringify(echo.content)).toContain('hello');
        const text = await client.readResource({ uri: 'demo://resource/dynamic/text/1' });
        expect(text.contents[0]?.uri).toBe('demo://resource/dynamic/text/1');
      } finally {
        await client.close();
      }
    });
  });
});
