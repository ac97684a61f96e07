import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instanceDirectory, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { fileInTarball, npm, pack, repositoryRoot } from '../support/packing.ts';
import { runPortico } from '../support/portico.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * `npm init @portico/plugin` as a plugin author runs it: @portico/create-plugin packed as it would
 * be published, run through `npm exec --package <tarball>` (what `npm init @portico/plugin` does
 * with the published name) in a folder outside this repository; the package it writes installed
 * against the packed core, typechecked, tested, built and packed with its own scripts; the tarball
 * added to an instance with `portico plugin add`; the real `portico` process serving a route
 * through the new type to a real upstream.
 */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-create-plugin-'));
const tarballs = path.join(scratch, 'tarballs');
const PLUGIN = '@acme/portico-user-info';
let initializer: string;
let author: string;
let pluginTarball: string;

beforeAll(async () => {
  initializer = await pack(path.join(repositoryRoot, 'packages/create-plugin'), tarballs);
}, 120_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its summary
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

describe('the packed initializer', () => {
  it('carries the template and its LICENSE, and no TypeScript sources', async () => {
    const manifest = JSON.parse(await fileInTarball(initializer, 'package.json'));
    expect(manifest.bin).toEqual({ 'create-plugin': './bin/create-plugin.js' });
    expect(await fileInTarball(initializer, 'LICENSE')).toBe(
      readFileSync(path.join(repositoryRoot, 'LICENSE'), 'utf8'),
    );
    const carried = JSON.parse(await fileInTarball(initializer, 'template.json'));
    expect(carried.files['src/template-filter.ts']).toBe(
      readFileSync(path.join(repositoryRoot, 'packages/plugin-template/src/template-filter.ts'), 'utf8'),
    );
    // Packing left nothing behind in the workspace folder, and took nothing away (its LICENSE is its own).
    expect(existsSync(path.join(repositoryRoot, 'packages/create-plugin/template.json'))).toBe(false);
    expect(existsSync(path.join(repositoryRoot, 'packages/create-plugin/LICENSE'))).toBe(true);
  });
});

describe('a plugin written by npm init @portico/plugin', () => {
  it('is written outside the repository: a filter, standalone, the core a peer', {
    timeout: 60_000,
  }, async () => {
    author = path.join(scratch, 'acme-user-info');
    const output = await npm(
      [
        'exec',
        '--yes',
        '--package',
        initializer,
        '--',
        'create-plugin',
        'acme-user-info',
        '--type',
        'UserInfoFilter',
        '--name',
        PLUGIN,
        '--core',
        `file:${inject('coreTarball')}`,
      ],
      scratch,
    );
    expect(output).toContain(`created acme-user-info: ${PLUGIN} with UserInfoFilter (a filter)`);
    expect(author.startsWith(repositoryRoot)).toBe(false);
    const manifest = JSON.parse(readFileSync(path.join(author, 'package.json'), 'utf8'));
    expect(manifest.peerDependencies).toEqual({ '@portico/gateway-core': '>=0.1.0 <1.0.0' });
    expect(manifest.private).toBeUndefined();
    expect(manifest.repository).toBeUndefined();
    expect(JSON.stringify(manifest)).not.toContain('portico-source');
    expect(existsSync(path.join(author, 'src/user-info-filter.ts'))).toBe(true);
  });

  it('installs, typechecks, passes its tests and builds', { timeout: 240_000 }, async () => {
    await npm(['install', '--prefer-offline'], author);
    await npm(['run', 'typecheck'], author);
    const output = plain(await npm(['test'], author));
    expect(output).toMatch(/Tests\s+\d+ passed/);
    expect(output).not.toMatch(/failed|skipped/);
    await npm(['run', 'build'], author);
    expect(existsSync(path.join(author, 'dist/index.js'))).toBe(true);
  });

  it('packs to a tarball of built JavaScript with its LICENSE', { timeout: 120_000 }, async () => {
    pluginTarball = await pack(author, tarballs);
    const manifest = JSON.parse(await fileInTarball(pluginTarball, 'package.json'));
    expect(manifest.name).toBe(PLUGIN);
    expect(await fileInTarball(pluginTarball, 'dist/user-info-filter.js')).toContain('UserInfoFilter');
    expect(await fileInTarball(pluginTarball, 'LICENSE')).toContain('Apache License');
  });
});

describe('portico plugin add, then the real gateway', () => {
  let upstream: Upstream;

  beforeAll(async () => {
    upstream = await startUpstream();
  });

  afterAll(() => upstream.close());

  it('serves a route through the new type to a real upstream', { timeout: 120_000 }, async () => {
    expect(pluginTarball).toBeDefined();
    const base = instanceDirectory({
      'config/routes/user.json': {
        name: 'user',
        condition: "${find(request.uri.path, '^/user/')}",
        baseURI: upstream.url,
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'UserInfoFilter',
                config: { header: 'X-User-Info', value: "user=${request.headers['X-User'][0]}" },
              },
            ],
            handler: 'ReverseProxyHandler',
          },
        },
      },
    });
    const added = await runPortico(['plugin', 'add', pluginTarball, '--base', base]);
    expect([added.code, added.stderr]).toEqual([0, '']);
    expect(added.stdout).toContain(`added ${PLUGIN} 0.1.0  UserInfoFilter  (core >=0.1.0 <1.0.0: ok)`);
    const gateway = await startGateway({ base });
    try {
      const reply = await send(`${gateway.url}/user/me`, { headers: { 'X-User': 'ann' } });
      expect(reply.status).toBe(200);
      expect(reply.headers['x-upstream']).toBe('yes');
      expect(upstream.received.at(-1)).toMatchObject({
        url: '/user/me',
        headers: { 'x-user-info': 'user=ann' },
      });
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    expect(gateway.output()).not.toContain('PORTICO_E_');
  });
});
