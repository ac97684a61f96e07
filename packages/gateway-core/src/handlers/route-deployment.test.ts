import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreManifest } from '../builtins/index.ts';
import { Context } from '../context/context.ts';
import { Duration } from '../duration/duration.ts';
import { Heap } from '../heap/heap.ts';
import { Request } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import { TypeRegistry } from '../registry/registry.ts';
import { deployRoute, undeployRoute } from './route-deployment.ts';
import { Router } from './router.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A router on a fresh routes directory, holding `files`, scanned once (no watching). */
async function setup(files: Record<string, unknown> = {}, maxFileSize?: number) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-deploy-'));
  const directory = path.join(base, 'config', 'routes');
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  const environment = {
    baseDirectory: base,
    configDirectory: path.join(base, 'config'),
    scriptsDirectory: base,
    temporaryDirectory: base,
  };
  if (Object.keys(files).length > 0) {
    mkdirSync(directory, { recursive: true });
    for (const [id, json] of Object.entries(files))
      writeFileSync(path.join(directory, `${id}.json`), JSON.stringify(json));
  }
  const router = new Router({
    name: '_router',
    directory,
    scanInterval: Duration.ZERO,
    heap: new Heap({ registry, logger, environment }),
    logger,
    ...(maxFileSize === undefined ? {} : { maxFileSize }),
  });
  await router.start();
  cleanups.push(async () => {
    await router.destroy();
    rmSync(base, { recursive: true, force: true });
  });
  const answer = async (uri: string) => {
    const response = await router.handle(new Context(), new Request({ uri: `http://gw${uri}` }));
    return `${response.status} ${await response.entity.text()}`;
  };
  return { router, directory, answer };
}

const staticRoute = (prefix: string, text: string) => ({
  condition: `\${matches(request.uri.path, '^/${prefix}')}`,
  handler: { type: 'StaticResponseHandler', config: { status: 200, entity: text } },
});

describe('deployRoute', () => {
  it('writes <id>.json and serves the route at once; the file is what a restart reads', async () => {
    const { router, directory, answer } = await setup();
    expect(await deployRoute(router, 'hello', staticRoute('hello', 'hi'))).toEqual({
      ok: true,
      created: true,
    });
    expect(await answer('/hello')).toBe('200 hi');
    expect(JSON.parse(readFileSync(path.join(directory, 'hello.json'), 'utf8'))).toEqual(
      staticRoute('hello', 'hi'),
    );
    expect(router.stateOf('hello').serving).toMatchObject({ id: 'hello', name: 'hello' });
    expect(readdirSync(directory)).toEqual(['hello.json']);
  });

  it('replaces a route serving, and says it was not created', async () => {
    const { router, answer } = await setup({ hello: staticRoute('hello', 'old') });
    expect(await answer('/hello')).toBe('200 old');
    expect(await deployRoute(router, 'hello', staticRoute('hello', 'new'))).toEqual({
      ok: true,
      created: false,
    });
    expect(await answer('/hello')).toBe('200 new');
  });

  it('keeps the previous version, on disk and serving, when the new one does not load', async () => {
    const { router, directory, answer } = await setup({ hello: staticRoute('hello', 'old') });
    const outcome = await deployRoute(router, 'hello', { handler: { type: 'NoSuchHandler' } });
    expect(outcome).toMatchObject({ ok: false, status: 400 });
    expect(outcome.ok ? [] : outcome.problems?.map((p) => p.code)).toEqual(['PORTICO_E_UNKNOWN_TYPE']);
    expect(await answer('/hello')).toBe('200 old');
    expect(JSON.parse(readFileSync(path.join(directory, 'hello.json'), 'utf8'))).toEqual(
      staticRoute('hello', 'old'),
    );
    expect(router.stateOf('hello').failure).toBeUndefined();
  });

  it('leaves no file behind when a new route does not load', async () => {
    const { router, directory } = await setup();
    const outcome = await deployRoute(router, 'broken', { handler: { type: 'NoSuchHandler' } });
    expect(outcome).toMatchObject({ ok: false, status: 400 });
    expect(existsSync(path.join(directory, 'broken.json'))).toBe(false);
    expect(router.ids).toEqual([]);
  });

  it.each(['../escape', '.hidden', 'a/b', '', 'x'.repeat(129), 'sp ace'])(
    'refuses the id %j, writing nothing',
    async (id) => {
      const { router, directory } = await setup();
      expect(await deployRoute(router, id, staticRoute('x', 'x'))).toMatchObject({ ok: false, status: 400 });
      expect(existsSync(directory) ? readdirSync(directory) : []).toEqual([]);
    },
  );

  it('refuses what is not a JSON object, and a route larger than a route file may be', async () => {
    const { router } = await setup({}, 200);
    expect(await deployRoute(router, 'a', [1, 2])).toMatchObject({ ok: false, status: 400 });
    expect(await deployRoute(router, 'a', staticRoute('a', 'x'.repeat(300)))).toMatchObject({
      ok: false,
      status: 413,
    });
  });

  it('refuses a value nested deeper than a route file may be, with a coded problem, writing nothing', async () => {
    const { router, directory, answer } = await setup({ a: staticRoute('a', 'a') });
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const outcome = await deployRoute(router, 'deep', { handler: deep });
    expect(outcome).toMatchObject({ ok: false, status: 400 });
    expect(outcome.ok === false && outcome.problems?.[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { expected: 'at most 512 levels of nesting' },
    });
    expect(readdirSync(directory)).toEqual(['a.json']);
    expect(await answer('/a')).toBe('200 a');
  });

  it('takes deployments of one id one at a time: the last asked is the one serving', async () => {
    const { router, answer } = await setup();
    const outcomes = await Promise.all(
      ['1', '2', '3', '4'].map((n) => deployRoute(router, 'race', staticRoute('race', n))),
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, true, true]);
    expect(await answer('/race')).toBe('200 4');
  });
});

describe('undeployRoute', () => {
  it('removes the file and stops serving the route', async () => {
    const { router, directory, answer } = await setup({ hello: staticRoute('hello', 'hi') });
    expect(await undeployRoute(router, 'hello')).toBe(true);
    expect(await answer('/hello')).toBe('404 ');
    expect(existsSync(path.join(directory, 'hello.json'))).toBe(false);
  });

  it('is false for an id with no file, or one that cannot name a file', async () => {
    const { router } = await setup();
    expect(await undeployRoute(router, 'none')).toBe(false);
    expect(await undeployRoute(router, '../config')).toBe(false);
  });
});
