import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send, waitFor } from '../support/http.ts';

/**
 * A pattern from a route file, or from the request itself, cannot hold the worker: every regular
 * expression runs in time linear in its input. Without that rule each hostile request below would
 * backtrack 2^50 times and the gateway would answer nothing, to anyone.
 */
describe('regular expressions against hostile input, through portico start', () => {
  let gw: RunningGateway;
  const hostile = `${'a'.repeat(50)}!`;

  beforeAll(async () => {
    const base = instanceDirectory({
      'config/routes/10-configured.json': {
        name: '10-configured',
        condition: "${request.uri.path == '/configured' and matches(request.headers['X-Re'][0], '^(a+)+$')}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'matched' } },
      },
      'config/routes/20-case.json': {
        name: '20-case',
        condition: "${request.uri.path == '/case' and matches(request.headers['X-Re'][0], '(?i)^(A+)+$')}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'matched' } },
      },
      'config/routes/30-supplied.json': {
        name: '30-supplied',
        condition:
          "${request.uri.path == '/supplied' and matches(request.headers['X-In'][0], request.headers['X-Pattern'][0])}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'matched' } },
      },
      // The same condition as 30-supplied, with warnings of its own (each expression's are rate-limited).
      'config/routes/35-budget.json': {
        name: '35-budget',
        condition:
          "${request.uri.path == '/budget' and matches(request.headers['X-In'][0], request.headers['X-Pattern'][0])}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'matched' } },
      },
      // A whole-input match of a multiline pattern: its anchored form must stay linear too.
      'config/routes/40-whole.json': {
        name: '40-whole',
        condition: "${request.uri.path == '/whole' and request.headers['X-Re'][0].matches('(?m)(a|aa)+')}",
        handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'matched' } },
      },
      'config/routes/99-rest.json': {
        name: '99-rest',
        handler: { type: 'StaticResponseHandler', config: { status: 404, entity: 'no match' } },
      },
    });
    gw = await startGateway({ base });
  });

  afterAll(async () => {
    expect(await gw?.stop()).toBe(0);
  });

  it.each([
    ['/configured', { 'X-Re': hostile }],
    ['/case', { 'X-Re': hostile }],
    ['/supplied', { 'X-In': hostile, 'X-Pattern': '^(a+)+$' }],
    ['/supplied', { 'X-In': hostile, 'X-Pattern': '(?i)(a|aa)+$' }],
    ['/whole', { 'X-Re': hostile }],
  ])('%s with %j is answered, and so is the next request', async (path, headers) => {
    const started = Date.now();
    const reply = await send(`${gw.url}${path}`, { headers, timeoutMs: 10_000 });
    expect(reply.status).toBe(404);
    const next = await send(`${gw.url}${path}`, {
      headers: Object.fromEntries(
        Object.entries(headers as Record<string, string>).map(([k, v]) => [
          k,
          k === 'X-Pattern' ? v : 'aaaa',
        ]),
      ),
    });
    expect(next.status).toBe(200);
    // Generous: the point is an answer at all (2^50 steps would take days), not a timing.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a short pattern the request supplies that is a large program is refused at once, and another client is served meanwhile', async () => {
    // 16 characters, 3,003 RE2 instructions: against 12 KB it held the worker about 1.3 s.
    const headers = { 'X-In': 'a'.repeat(12 * 1024), 'X-Pattern': '(?i)(a|b){1000}x' };
    const started = Date.now();
    const hostileReply = send(`${gw.url}/budget`, { headers, timeoutMs: 10_000 });
    const other = await send(`${gw.url}/configured`, { headers: { 'X-Re': 'aaaa' } });
    const otherMs = Date.now() - started;
    expect(other.status).toBe(200);
    expect((await hostileReply).status).toBe(404);
    expect(otherMs).toBeLessThan(800);
    expect(Date.now() - started).toBeLessThan(800);
    await waitFor(
      'the warning naming the sizes',
      () => gw.output().includes('a program of 3003 instructions') || undefined,
      { timeoutMs: 5000 },
    );
    // Sizes only: the pattern itself is not copied into the log.
    expect(gw.output()).not.toContain('{1000}x');
    // An ordinary pattern from the request still works on a long header.
    const found = await send(`${gw.url}/budget`, {
      headers: { 'X-In': `${'k=v;'.repeat(3000)}e=d;`, 'X-Pattern': '\\w+=\\w+;$' },
    });
    expect(found.status).toBe(200);
  });

  it('a pattern the request supplies that cannot run in linear time is refused: the condition is false', async () => {
    const reply = await send(`${gw.url}/supplied`, { headers: { 'X-In': 'aa', 'X-Pattern': '(a)\\1' } });
    expect(reply.status).toBe(404);
    // The warning is logged as the evaluation fails; the log line may reach us after the answer.
    await waitFor(
      'the warning about the refused pattern',
      () => gw.output().includes('linear') || undefined,
      {
        timeoutMs: 5000,
      },
    );
  });
});
