import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Context, type Handler, Request } from '@portico/gateway-core';
import { pluginHeap } from '@portico/gateway-core/testing';
import { upstreamForSuite } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import plugin from './index.ts';

const FILE = 'config/config.json';
const upstream = upstreamForSuite((_request, response) => {
  response.writeHead(200, { 'Content-Type': 'text/plain', 'Set-Cookie': 'sid=secret' });
  response.end('from upstream');
});

/** OpenIG 3's shape: a Chain whose filters include the CaptureFilter, in front of a ClientHandler. */
function chainWith(config: unknown) {
  const made = pluginHeap({
    plugins: [plugin],
    file: FILE,
    heap: {
      objects: [
        { name: 'CaptureFilter', type: 'CaptureFilter', config },
        {
          name: 'Main',
          type: 'Chain',
          config: { filters: ['CaptureFilter'], handler: { type: 'ClientHandler' } },
        },
      ],
    },
  });
  return { ...made, chain: () => made.heap.get<Handler>('Main', 'handler') };
}

const context = () => new Context({ transactionId: 'tx-9' });

async function through(config: unknown, request = new Request({ uri: `${upstream.url}/page` })) {
  const made = chainWith(config);
  const response = await (await made.chain()).handle(context(), request);
  const body = await response.entity.text();
  await made.heap.destroy();
  return { ...made, response, body };
}

/** What the fallback console sink wrote to the heap's log. */
const captured = (logger: ReturnType<typeof chainWith>['logger']) =>
  logger.records.map((r) => r.message).filter((m) => m.includes('@Capture['));

describe('CaptureFilter', () => {
  it('captures the request and the response around the rest of the chain, leaving both as they were', async () => {
    const { logger, response, body } = await through({});
    expect(response.status).toBe(200);
    expect(body).toBe('from upstream');
    const [request, answer] = captured(logger);
    expect(request).toMatch(/--- \(request\) id:tx-9 --->\nGET http:\/\/127\.0\.0\.1:\d+\/page HTTP\/1\.1/);
    expect(answer).toMatch(/<--- \(response\) id:tx-9 ---\nHTTP\/1\.1 200 OK/);
    expect(upstream.received.at(-1)?.target).toBe('/page');
  });

  describe('captureEntity', () => {
    it('is true by default: bodies are captured', async () => {
      const { logger } = await through({});
      expect(captured(logger)[1]).toContain('from upstream');
    });

    it('false leaves bodies out', async () => {
      const { logger } = await through({ captureEntity: false });
      expect(captured(logger)[1]).not.toContain('from upstream');
    });
  });

  it('masks credentials, as CaptureDecorator does', async () => {
    const { logger } = await through({});
    expect(captured(logger)[1]).toContain('Set-Cookie: sid=*****');
  });

  describe('captureExchange', () => {
    it('true adds the context', async () => {
      const { logger } = await through({ captureExchange: true });
      expect(captured(logger)[0]).toContain('--- context ---');
    });

    it('is false by default', async () => {
      const { logger } = await through({});
      expect(captured(logger)[0]).not.toContain('--- context ---');
    });
  });

  describe('condition', () => {
    it('captures only the requests it holds for', async () => {
      const config = { condition: "${request.uri.path == '/captured'}" };
      const skipped = await through(config, new Request({ uri: `${upstream.url}/page` }));
      expect(captured(skipped.logger)).toEqual([]);
      expect(skipped.body).toBe('from upstream');
      const taken = await through(config, new Request({ uri: `${upstream.url}/captured` }));
      expect(captured(taken.logger)).toHaveLength(2);
    });

    it('refuses an expression that does not compile', async () => {
      await expect(chainWith({ condition: '${request.uri ==}' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { file: FILE, jsonPath: '$.heap.objects[0].config.condition' },
      });
    });
  });

  describe('file and charset', () => {
    it('appends the captures to the file, relative to the instance directory', async () => {
      const made = chainWith({ file: 'logs-capture.log' });
      const target = path.join(made.environment.baseDirectory, 'logs-capture.log');
      expect(existsSync(target)).toBe(false);
      const response = await (await made.chain()).handle(
        context(),
        new Request({ uri: `${upstream.url}/f` }),
      );
      await response.entity.text();
      await made.heap.destroy();
      const text = readFileSync(target, 'utf8');
      expect(text).toMatch(
        /^\d{4}-\d\d-\d\dT\S+ @Capture\[CaptureFilter\] --- \(request\) id:tx-9 --->\nGET /,
      );
      expect(text).toContain('from upstream');
      expect(captured(made.logger)).toEqual([]);
    });

    it('writes in the charset given', async () => {
      upstream.answer((_request, response) => {
        response.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
        response.end('café');
      });
      const made = chainWith({ file: 'latin.log', charset: 'ISO-8859-1' });
      const response = await (await made.chain()).handle(context(), new Request({ uri: `${upstream.url}/` }));
      await response.entity.text();
      await made.heap.destroy();
      const bytes = readFileSync(path.join(made.environment.baseDirectory, 'latin.log'));
      expect(bytes.includes(Buffer.from('caf\xe9', 'latin1'))).toBe(true);
    });

    it('refuses a charset it does not know', async () => {
      await expect(chainWith({ file: 'x.log', charset: 'EBCDIC' }).chain()).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap.objects[0].config.charset' },
      });
    });

    it('reports a file it cannot write once, and the requests go on', async () => {
      const made = chainWith({ file: '/nonexistent-dir/for/capture.log' });
      const chain = await made.chain();
      for (let i = 0; i < 2; i++) {
        const response = await chain.handle(context(), new Request({ uri: `${upstream.url}/` }));
        expect(response.status).toBe(200);
        await response.entity.text();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await made.heap.destroy();
      expect(made.logger.records.filter((r) => r.level === 'error')).toHaveLength(1);
    });
  });

  it('refuses a setting it does not know', async () => {
    await expect(chainWith({ captureEverything: true }).chain()).rejects.toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath: '$.heap.objects[0].config.captureEverything' },
    });
  });
});
