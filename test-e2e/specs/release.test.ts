import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { send } from '../support/http.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

describe('the release pipeline', () => {
  it('changeset status accepts every pending changeset (no changeset mixes ignored and versioned packages)', async () => {
    const result = await run(
      process.execPath,
      [path.join(root, 'node_modules/@changesets/cli/bin.js'), 'status'],
      {
        cwd: root,
      },
    ).then(
      (r) => ({ code: 0, output: r.stdout + r.stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? 1,
        output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
      }),
    );
    expect(result.output).not.toContain('Mixed changesets');
    expect(result.code).toBe(0);
  });
});

/**
 * `changeset version` bumps the core and, with it, every plugin's peer range: on a scratch copy of
 * the repository (its node_modules hard-linked, so the workspace links point into the copy), the
 * versioned gateway must still load its plugins and answer through them.
 */
describe('after changeset version', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-release-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** A clone of the committed repository with node_modules hard-linked. */
  async function scratchCopy(copy: string): Promise<string> {
    await run('git', ['clone', '--quiet', root, copy]);
    await run('cp', ['-al', path.join(root, 'node_modules'), path.join(copy, 'node_modules')]);
    return copy;
  }

  it('a minor release of the core alone leaves every plugin at its own version and range', {
    timeout: 120_000,
  }, async () => {
    const copy = await scratchCopy(path.join(scratch, 'core-only'));
    const changesets = path.join(copy, '.changeset');
    for (const file of readdirSync(changesets)) {
      if (file.endsWith('.md') && file !== 'README.md') rmSync(path.join(changesets, file));
    }
    writeFileSync(
      path.join(changesets, 'core-minor.md'),
      '---\n"@portico/gateway-core": minor\n---\n\nAn addition to the plugin contract.\n',
    );
    const manifest = (dir: string) =>
      JSON.parse(readFileSync(path.join(copy, 'packages', dir, 'package.json'), 'utf8'));
    const before = manifest('filter-header');
    await run(process.execPath, [path.join(copy, 'node_modules/@changesets/cli/bin.js'), 'version'], {
      cwd: copy,
    });
    const core = manifest('gateway-core');
    expect(core.version).not.toBe(before.version);
    const after = manifest('filter-header');
    expect(after.version).toBe(before.version);
    expect(after.peerDependencies).toEqual(before.peerDependencies);
    const loaded = await run(
      process.execPath,
      [path.join(copy, 'apps/gateway/bin/portico.js'), 'plugin', 'list', '--load', '--base', scratch],
      { env: { ...process.env, PORTICO_BASE: undefined } },
    );
    expect(loaded.stdout).toContain(`running @portico/gateway-core ${core.version}`);
    expect(loaded.stderr).toBe('');
  });

  it('every plugin loads on the versioned core, and the gateway answers through them', {
    timeout: 120_000,
  }, async () => {
    const copy = await scratchCopy(path.join(scratch, 'repo'));
    await run(process.execPath, [path.join(copy, 'node_modules/@changesets/cli/bin.js'), 'version'], {
      cwd: copy,
    });
    const core = JSON.parse(readFileSync(path.join(copy, 'packages/gateway-core/package.json'), 'utf8'));
    const header = JSON.parse(readFileSync(path.join(copy, 'packages/filter-header/package.json'), 'utf8'));
    // The plugin contract's policy: 0.x minors of the core keep it, so the ranges survive them.
    expect(header.peerDependencies['@portico/gateway-core']).toBe('>=0.1.0 <1.0.0');

    // Every plugin package of the versioned workspace loads on the versioned core (entry, manifest,
    // peer range bumped with the core), not only those the route below uses.
    const loaded = await run(
      process.execPath,
      [path.join(copy, 'apps/gateway/bin/portico.js'), 'plugin', 'list', '--load', '--base', scratch],
      { env: { ...process.env, PORTICO_BASE: undefined } },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      throw new Error(`plugin list --load failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    });
    const plugins = readdirSync(path.join(copy, 'packages')).filter((dir) => {
      const json = JSON.parse(readFileSync(path.join(copy, 'packages', dir, 'package.json'), 'utf8'));
      return json.portico !== undefined && json.private !== true;
    });
    expect(plugins.length).toBeGreaterThan(15);
    expect(loaded.stdout).toContain(
      `${plugins.length} plugin packages; running @portico/gateway-core ${core.version}`,
    );
    expect(loaded.stderr).toBe('');

    const base = instanceDirectory({
      'config/routes/plugins.json': {
        name: 'plugins',
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'AssignmentFilter',
                config: { onRequest: [{ target: '${attributes.who}', value: 'plugins' }] },
              },
              {
                type: 'HeaderFilter',
                config: { messageType: 'RESPONSE', add: { 'X-Who': ['${attributes.who}'] } },
              },
              {
                type: 'ThrottlingFilter',
                config: { rate: { numberOfRequests: 100, duration: '1 second' } },
              },
            ],
            handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'versioned' } },
          },
        },
      },
    });
    const child = spawn(
      process.execPath,
      [
        path.join(copy, 'apps/gateway/bin/portico.js'),
        'start',
        '--base',
        base,
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--workers',
        '1',
      ],
      { env: { ...process.env, PORTICO_BASE: undefined }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no start:\n${output}`)), 30_000);
        child.stdout.on('data', () => {
          const found = /listening on (http:\/\/[^\s]+)/.exec(output);
          if (found) {
            clearTimeout(timer);
            resolve(found[1]!);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
      });
      const reply = await send(`${url}/anything`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('versioned');
      expect(reply.headers['x-who']).toBe('plugins');
      expect(output).not.toContain('PORTICO_E_MANIFEST');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
