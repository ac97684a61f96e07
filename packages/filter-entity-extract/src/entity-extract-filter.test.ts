import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { type Context, compile, ErrorCode, isPorticoError, Request, Response } from '@portico/gateway-core';
import { pluginHeap, recordingHandler, resolveTokens, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type EntityExtractFilter } from './index.ts';

function heapWith(config: unknown, extra: unknown[] = []) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/extract.json',
    heap: [...extra, { name: 'Extract', type: 'EntityExtractFilter', config }],
  });
}

function filterFrom(config: unknown): Promise<EntityExtractFilter> {
  return heapWith(config).heap.get<EntityExtractFilter>('Extract', 'filter');
}

const onRequest = (bindings: unknown[], extra: Record<string, unknown> = {}) => ({
  messageType: 'REQUEST',
  target: '${attributes.extracted}',
  bindings,
  ...extra,
});

/** Runs the filter on a request with `body`; returns the target and the body the next handler read. */
async function extractFromRequest(
  filter: EntityExtractFilter,
  body: string | Buffer | Readable | null,
  headers: Record<string, string> = {},
) {
  const context = testContext();
  let seen: string | undefined;
  const next = {
    async handle(_context: Context, request: Request) {
      seen = await request.entity.text();
      return new Response({ status: 200 });
    },
  };
  await filter.filter(
    context,
    new Request({ method: 'POST', uri: 'http://app/', headers, entity: body }),
    next,
  );
  return { extracted: context.attributes.extracted as Record<string, string | null>, seen };
}

describe('EntityExtractFilter', () => {
  describe('bindings', () => {
    it('stores the first match of each pattern under its key, through its template', async () => {
      const filter = await filterFrom(
        onRequest([
          { key: 'user', pattern: 'user=(\\w+)', template: '$1' },
          { key: 'whole', pattern: 'id=\\d+' },
          { key: 'both', pattern: '(\\w+)@(\\w+)', template: '$2 has $1 ($0)' },
        ]),
      );
      const { extracted } = await extractFromRequest(filter, 'x user=alice id=42\nuser=bob\nmail: joe@corp');
      expect(extracted).toEqual({ user: 'alice', whole: 'id=42', both: 'corp has joe (joe@corp)' });
    });

    it('reads $10 as group ten, and takes a backslash literally', async () => {
      const filter = await filterFrom(
        onRequest([{ key: 'k', pattern: '(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)', template: '$10-$1\\0 \\$1 $' }]),
      );
      expect((await extractFromRequest(filter, 'abcdefghij')).extracted.k).toBe('j-a0 $1 ');
    });

    it('gives an empty string for a group the pattern does not have or that did not match', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'x(y)?', template: '[$1][$7]' }]));
      expect((await extractFromRequest(filter, 'x')).extracted.k).toBe('[][]');
    });

    it('gives null for a pattern that does not match', async () => {
      const filter = await filterFrom(
        onRequest([
          { key: 'found', pattern: 'OpenAM\\s\\(Login\\)', template: 'true' },
          { key: 'missing', pattern: 'nowhere' },
        ]),
      );
      const { extracted } = await extractFromRequest(filter, '<title>OpenAM (Login)</title>');
      expect(extracted).toEqual({ found: 'true', missing: null });
    });

    it('matches within a line, as the incumbent reads line by line', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'a\\s+b' }]));
      expect((await extractFromRequest(filter, 'a\nb\r\na   b')).extracted.k).toBe('a   b');
      expect((await extractFromRequest(filter, 'a\r\nb')).extracted.k).toBeNull();
    });

    it('is required, and so are key and pattern', async () => {
      await expect(filterFrom({ messageType: 'REQUEST', target: '${attributes.x}' })).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/extract.json', jsonPath: '$.heap[0].config.bindings' },
      });
      await expect(filterFrom(onRequest([{ pattern: 'x' }]))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.bindings[0].key' },
      });
      await expect(filterFrom(onRequest([{ key: 'k' }]))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.bindings[0].pattern' },
      });
    });

    it('refuses a pattern that does not compile, naming its place', async () => {
      await expect(filterFrom(onRequest([{ key: 'k', pattern: '(unclosed' }]))).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
        details: { jsonPath: '$.heap[0].config.bindings[0].pattern' },
      });
    });

    it('refuses a key defined twice', async () => {
      const bindings = [
        { key: 'k', pattern: 'a' },
        { key: 'k', pattern: 'b' },
      ];
      await expect(filterFrom(onRequest(bindings))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.bindings[1].key' },
      });
    });
  });

  describe('settings from the environment', () => {
    it('are described, not quoted, in its problems: a pattern that does not compile, a key defined twice', async () => {
      const config = resolveTokens(
        onRequest([
          { key: '&{extract.key}', pattern: '&{extract.pattern}' },
          { key: '&{extract.key}', pattern: 'b' },
        ]),
        { env: { EXTRACT_PATTERN: '(hunter2-s3cr3t', EXTRACT_KEY: 'hunter2-key' } },
      );
      const error = await filterFrom(config).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isPorticoError(error) && error.toString()).toBe(
        'PORTICO_E_CONFIG routes/extract.json $.heap[0].config.bindings[0].pattern: the value of &{extract.pattern} (15 characters, not shown) is not a regular expression (expected a regular expression)',
      );
      expect(JSON.stringify(error)).not.toContain('hunter2');
      const keys = resolveTokens(
        onRequest([
          { key: '&{extract.key}', pattern: 'a' },
          { key: '&{extract.key}', pattern: 'b' },
        ]),
        {
          env: { EXTRACT_KEY: 'hunter2-key' },
        },
      );
      const twice = await filterFrom(keys).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isPorticoError(twice) && twice.message).toBe(
        'the key the value of &{extract.key} (11 characters, not shown) is already defined',
      );
    });

    it("while a pattern written in the file keeps the compiler's own account", async () => {
      const error = await filterFrom(onRequest([{ key: 'k', pattern: '(unclosed' }])).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isPorticoError(error) && error.code).toBe('PORTICO_E_EXPRESSION');
      expect(isPorticoError(error) && error.details.text).toBe('(unclosed');
    });
  });

  describe('the body', () => {
    it('stays readable by the next handler after a request is searched', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'b+' }]));
      const { extracted, seen } = await extractFromRequest(
        filter,
        Readable.from([Buffer.from('aaa'), Buffer.from('bbb\nccc')]),
      );
      expect(extracted.k).toBe('bbb');
      expect(seen).toBe('aaabbb\nccc');
    });

    it('stays readable when it is larger than the memory of the temporary storage', async () => {
      const { heap } = heapWith(onRequest([{ key: 'k', pattern: 'needle-\\d+' }]), [
        { name: 'TemporaryStorage', type: 'TemporaryStorage', config: { memoryLimit: 1024 } },
      ]);
      const filter = await heap.get<EntityExtractFilter>('Extract', 'filter');
      const body = `${'hay\n'.repeat(5000)}needle-7\n${'hay\n'.repeat(5000)}`;
      const { extracted, seen } = await extractFromRequest(filter, Readable.from([Buffer.from(body)]));
      expect(extracted.k).toBe('needle-7');
      expect(seen).toBe(body);
    });

    it('gives null to every key when there is none', async () => {
      const filter = await filterFrom(
        onRequest([
          { key: 'a', pattern: 'x' },
          { key: 'b', pattern: 'y' },
        ]),
      );
      expect((await extractFromRequest(filter, null)).extracted).toEqual({ a: null, b: null });
    });

    it('is decoded from gzip before it is searched', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'token=(\\w+)', template: '$1' }]));
      const { extracted } = await extractFromRequest(filter, gzipSync('token=abc'), {
        'Content-Encoding': 'gzip',
      });
      expect(extracted.k).toBe('abc');
    });

    // A few kilobytes of gzip can stand for gigabytes: decoding is bounded like a body read whole.
    it('a body that decodes to more than the buffered-body limit is refused (ENTITY_TOO_LARGE), not decoded on', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'token=(\\w+)', template: '$1' }]));
      const bomb = gzipSync(Buffer.alloc(11 * 1024 * 1024, 'a'));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const failure = await extractFromRequest(filter, bomb, { 'Content-Encoding': 'gzip' }).catch(
        (error: unknown) => error,
      );
      expect(isPorticoError(failure, ErrorCode.ENTITY_TOO_LARGE)).toBe(true);
    });

    it('undoes up to five stacked codings; more are not decoded, and every key is null', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'token=(\\w+)', template: '$1' }]));
      const stacked = (times: number) => {
        let body: Buffer = Buffer.from('token=abc');
        for (let i = 0; i < times; i++) body = gzipSync(body);
        return body;
      };
      const codings = (times: number) => Array(times).fill('gzip').join(', ');
      const five = await extractFromRequest(filter, stacked(5), { 'Content-Encoding': codings(5) });
      expect(five.extracted.k).toBe('abc');
      const six = await extractFromRequest(filter, stacked(6), { 'Content-Encoding': codings(6) });
      expect(six.extracted.k).toBeNull();
    });

    it('finds a match in a line longer than the search window', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'end-marker' }]));
      const { extracted } = await extractFromRequest(filter, `${'x'.repeat(3 * 1024 * 1024)}end-marker`);
      expect(extracted.k).toBe('end-marker');
    });
  });

  describe('messageType', () => {
    it('RESPONSE searches the response after the next handler, which the user agent still receives', async () => {
      const filter = await filterFrom({
        messageType: 'response',
        target: '${attributes.page}',
        bindings: [{ key: 'title', pattern: '<title>(.*)</title>', template: '$1' }],
      });
      const context = testContext();
      const next = recordingHandler(
        () =>
          new Response({
            headers: { 'Content-Type': 'text/html' },
            entity: Readable.from([Buffer.from('<html><title>Sign in</title>')]),
          }),
      );
      const response = await filter.filter(
        context,
        new Request({ uri: 'http://app/', entity: 'title' }),
        next.handler,
      );
      expect(compile('${attributes.page.title}').evaluate({ attributes: context.attributes })).toBe(
        'Sign in',
      );
      expect(await response.entity.text()).toBe('<html><title>Sign in</title>');
    });

    it('REQUEST leaves the response alone', async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'x' }]));
      const context = testContext();
      const next = recordingHandler(() => new Response({ entity: 'x' }));
      await filter.filter(context, new Request({ uri: 'http://app/', entity: 'nothing' }), next.handler);
      expect(context.attributes.extracted).toEqual({ k: null });
    });

    it('is required and must be REQUEST or RESPONSE', async () => {
      await expect(filterFrom({ target: '${attributes.x}', bindings: [] })).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.messageType' },
      });
      await expect(filterFrom(onRequest([], { messageType: 'BODY' }))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.messageType' },
      });
    });
  });

  describe('charset', () => {
    it("defaults to the message's Content-Type charset, else UTF-8", async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'caf.' }]));
      const latin = Buffer.from('café', 'latin1');
      const declared = await extractFromRequest(filter, latin, {
        'Content-Type': 'text/plain; charset=ISO-8859-1',
      });
      expect(declared.extracted.k).toBe('café');
      expect((await extractFromRequest(filter, Buffer.from('café', 'utf8'))).extracted.k).toBe('café');
    });

    it("overrides the message's charset", async () => {
      const filter = await filterFrom(onRequest([{ key: 'k', pattern: 'caf.' }], { charset: 'ISO-8859-1' }));
      const { extracted } = await extractFromRequest(filter, Buffer.from('café', 'latin1'), {
        'Content-Type': 'text/plain; charset=UTF-8',
      });
      expect(extracted.k).toBe('café');
    });

    it('refuses an unknown character set', async () => {
      await expect(filterFrom(onRequest([], { charset: 'UTF-9' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.charset' },
      });
    });
  });

  describe('target', () => {
    it('is required and must be assignable', async () => {
      await expect(filterFrom({ messageType: 'REQUEST', bindings: [] })).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.target' },
      });
      await expect(filterFrom(onRequest([], { target: 'x-${attributes.a}' }))).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
      });
    });

    it('may be in the session', async () => {
      const filter = await filterFrom(
        onRequest([{ key: 'k', pattern: 'v' }], { target: '${session.found}' }),
      );
      const context = testContext();
      await filter.filter(
        context,
        new Request({ uri: 'http://app/', entity: 'v' }),
        recordingHandler().handler,
      );
      expect(JSON.parse(JSON.stringify(context.session))).toEqual({ found: { k: 'v' } });
    });
  });
});
