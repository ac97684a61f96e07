import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { condition } from '../config/condition-schema.ts';
import { checkConfig } from '../config/parse-config.ts';
import { createMemoryLogger } from '../logging.ts';
import { holds } from './conditions.ts';
import { pathPrefixOf, RouteIndex, regexPrefix } from './route-index.ts';

const logger = createMemoryLogger();
const parse = (text: unknown) => checkConfig(condition(), text, { logger }).value;

describe('pathPrefixOf', () => {
  it.each<[unknown, string | undefined]>([
    ["${matches(request.uri.path, '^/api/')}", '/api/'],
    ["${find(request.uri.path, '^/r17/')}", '/r17/'],
    ['${find(request.uri.path, "^/kube")}', '/kube'],
    ["${matchesWithRegex(request.uri.path, '/exact/[0-9]+')}", '/exact/'],
    ["${request.uri.path.startsWith('/app')}", '/app'],
    ["${request.uri['path'].startsWith('/app')}", '/app'],
    ["${request.uri.path == '/static.json'}", '/static.json'],
    ["${'/static.json' eq request.uri.path}", '/static.json'],
    ["${matches(request.uri.path, '^/api') and request.method == 'GET'}", '/api'],
    ["${request.method == 'GET' && find(request.uri.path, '^/v1/users')}", '/v1/users'],
    [{ expression: "${find(request.uri.path, '^/labelled')}", label: 'x' }, '/labelled'],
    ["${find(request.uri.path, '^/a\\\\.b/c')}", '/a.b/c'],
    ["${find(request.uri.path, '^/ab?c')}", '/a'],
    ["${find(request.uri.path, '^/items/\\\\d+')}", '/items/'],
    // Nothing certain: no index, the condition is evaluated for every request.
    ["${find(request.uri.path, '/api')}", undefined],
    ["${find(request.uri.path, '^/a|^/b')}", undefined],
    ["${find(request.uri.path, '(?i)^/api')}", undefined],
    ["${matches(request.uri.path, '^/api') or true}", undefined],
    ["${not matches(request.uri.path, '^/api')}", undefined],
    ["${matches(request.uri.host, '^api')}", undefined],
    ["${find(attributes.path, '^/x')}", undefined],
    ['${find(request.uri.path, pattern)}', undefined],
    ["${find(request.uri.path, '^.*')}", undefined],
    ['${true}', undefined],
    [true, undefined],
    [undefined, undefined],
  ])('%j needs the path to start with %j', (raw, prefix) => {
    expect(pathPrefixOf(raw === undefined ? undefined : parse(raw))).toBe(prefix);
  });
});

describe('regexPrefix', () => {
  it.each<[string, boolean, string | undefined]>([
    ['^/x/y', true, '/x/y'],
    ['/x/y', true, undefined],
    ['/x/y', false, '/x/y'],
    ['^/x*', true, '/'],
    ['^/x{2}', true, '/'],
    ['^/x+', true, '/'],
    ['^\\Q/x\\E', true, undefined],
    ['^/a\\/b', true, '/a/b'],
    ['^$', true, undefined],
  ])('%s (anchor needed: %s) gives %j', (regex, anchored, prefix) => {
    expect(regexPrefix(regex, anchored)).toBe(prefix);
  });
});

describe('RouteIndex', () => {
  it('keeps route order among candidates and always includes unindexed routes', () => {
    const routes = [
      { id: 'a', prefix: '/api/' },
      { id: 'b', prefix: undefined },
      { id: 'c', prefix: '/api/v1/' },
      { id: 'd', prefix: '/web/' },
      { id: 'e', prefix: '/api' },
    ];
    const index = new RouteIndex(routes, (r) => r.prefix);
    expect(index.candidates('/api/v1/users').map((r) => r.id)).toEqual(['a', 'b', 'c', 'e']);
    expect(index.candidates('/web/x').map((r) => r.id)).toEqual(['b', 'd']);
    expect(index.candidates('/').map((r) => r.id)).toEqual(['b']);
    expect(index.candidates('/api').map((r) => r.id)).toEqual(['b', 'e']);
  });

  it('merges nested prefixes in route order when every route has a prefix', () => {
    const routes = [
      { id: 'a', prefix: '/api/v1/' },
      { id: 'b', prefix: '/web/' },
      { id: 'c', prefix: '/api/' },
      { id: 'd', prefix: '/api/v1/' },
    ];
    const index = new RouteIndex(routes, (r) => r.prefix);
    expect(index.candidates('/api/v1/x').map((r) => r.id)).toEqual(['a', 'c', 'd']);
    expect(index.candidates('/api/v2').map((r) => r.id)).toEqual(['c']);
    expect(index.candidates('/other')).toEqual([]);
  });

  it("returns a path's only candidates without making a list per request", () => {
    const routes = Array.from({ length: 50 }, (_, i) => ({ id: i, prefix: `/r${i}/` }));
    const index = new RouteIndex(routes, (r) => r.prefix);
    const first = index.candidates('/r7/a');
    expect(first.map((r) => r.id)).toEqual([7]);
    expect(index.candidates('/r7/b')).toBe(first);
    // With an unindexed route among them the lists are merged, so each request has its own.
    const mixed = new RouteIndex([...routes, { id: 50, prefix: undefined }], (r) => r.prefix);
    expect(mixed.candidates('/r7/a').map((r) => r.id)).toEqual([7, 50]);
    expect(mixed.candidates('/nothing').map((r) => r.id)).toEqual([50]);
  });

  it('merges any number of candidates (no spread of them as arguments)', () => {
    const many = 150_000;
    const routes = [
      ...Array.from({ length: many }, (_, i) => ({ id: i, prefix: '/a' as string | undefined })),
      ...Array.from({ length: many }, (_, i) => ({ id: many + i, prefix: i % 2 ? '/a/b' : undefined })),
    ];
    const index = new RouteIndex(routes, (r) => r.prefix);
    const found = index.candidates('/a/b/c');
    expect(found.length).toBe(2 * many);
    expect(found.every((route, i) => route.id === i)).toBe(true);
  });

  it('chooses exactly the route a scan of every condition chooses, for any routes and paths', () => {
    const segment = fc.constantFrom('api', 'v1', 'users', 'web', 'a', 'x.y');
    const path = fc.array(segment, { maxLength: 4 }).map((s) => `/${s.join('/')}`);
    const routeCondition = fc.oneof(
      path.map((p) => `\${find(request.uri.path, '^${p.replace(/\./g, '\\\\.')}')}`),
      path.map((p) => `\${request.uri.path.startsWith('${p}')}`),
      path.map((p) => `\${request.uri.path == '${p}'}`),
      path.map((p) => `\${find(request.uri.path, '${p}')}`),
      path.map((p) => `\${find(request.uri.path, '^${p}') and request.method == 'GET'}`),
      fc.constant('${false}'),
    );
    fc.assert(
      fc.property(
        fc.array(routeCondition, { maxLength: 12 }),
        fc.array(path, { minLength: 1, maxLength: 8 }),
        (texts, paths) => {
          const routes = texts.map((text, i) => ({ i, condition: parse(text)! }));
          const index = new RouteIndex(routes, (r) => pathPrefixOf(r.condition));
          for (const p of paths) {
            const bindings = { request: { method: 'GET', uri: { path: p } } };
            const scanned = routes.find((r) => holds(r.condition, bindings));
            const indexed = index.candidates(p).find((r) => holds(r.condition, bindings));
            expect(indexed?.i).toBe(scanned?.i);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
