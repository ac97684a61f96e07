import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { fileInTarball, npm, pack, repositoryRoot } from '../support/packing.ts';
import { runPortico } from '../support/portico.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * The server as a user installs it, end to end: the gateway and the core packed as npm would publish
 * them (after the build), installed into an empty folder outside the repository; two first-party
 * plugins packed and added to an instance with the installed `portico plugin add`; the installed
 * `portico start` serving a route that uses both, in front of a real upstream. An instance without
 * one of them is told which package provides its type and the command that adds it.
 */
const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-installed-'));
const tarballs = path.join(scratch, 'tarballs');
const project = path.join(scratch, 'my-gateway');
/** The installed command, as npm links it into the project's node_modules/.bin. */
const bin = path.join(project, 'node_modules/.bin/portico');
const tarball: Record<'core' | 'gateway' | 'header' | 'location', string> = {
  core: '',
  gateway: '',
  header: '',
  location: '',
};
let upstream: Upstream;

const LOCATION_ADVICE =
  "'LocationHeaderFilter' is provided by @portico/filter-location-header: " +
  'portico plugin add @portico/filter-location-header';

/** A route through both plugins' filters to the upstream. */
function route(upstreamUrl: string) {
  return {
    name: 'app',
    condition: "${find(request.uri.path, '^/app/')}",
    baseURI: upstreamUrl,
    handler: {
      type: 'Chain',
      config: {
        filters: [
          {
            type: 'HeaderFilter',
            config: {
              messageType: 'REQUEST',
              add: { 'X-Portico': ['${request.method} ${request.uri.path}'] },
            },
          },
          { type: 'LocationHeaderFilter', config: {} },
        ],
        handler: 'ReverseProxyHandler',
      },
    },
  };
}

beforeAll(async () => {
  // Packed once for the whole file, each from its built dist/ (the project's global setup builds).
  const folder = (name: string) => path.join(repositoryRoot, name);
  tarball.core = await pack(folder('packages/gateway-core'), tarballs);
  tarball.gateway = await pack(folder('apps/gateway'), tarballs);
  tarball.header = await pack(folder('packages/filter-header'), tarballs);
  tarball.location = await pack(folder('packages/filter-location-header'), tarballs);
  // The server as its user installs it: an empty project of their own, the core and the gateway.
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-gateway', private: true }));
  await npm(['install', '--prefer-offline', tarball.core, tarball.gateway], project);
  // It answers 302 to /app/login with a Location on itself; otherwise what it received.
  upstream = await startUpstream((req, res) => {
    upstream.received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyLength: 0 });
    if (req.url === '/app/login') {
      res.writeHead(302, { Location: `${upstream.url}/app/home`, 'Content-Length': '0' });
      res.end();
      return;
    }
    const body = JSON.stringify({ url: req.url, portico: req.headers['x-portico'] ?? null });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
}, 300_000);

afterAll(async () => {
  await upstream?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the packed gateway', () => {
  it('depends on the core and on no plugin, and ships its command as built JavaScript with its LICENSE', async () => {
    const manifest = JSON.parse(await fileInTarball(tarball.gateway, 'package.json'));
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@portico/'))).toEqual([
      '@portico/gateway-core',
    ]);
    expect(manifest.bin).toEqual({ portico: './bin/portico.js' });
    const files = execFileSync('tar', ['-tzf', tarball.gateway], { encoding: 'utf8' }).split('\n');
    expect(files.filter((file) => /\.[cm]?ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((file) => file.startsWith('package/src/'))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['package/bin/portico.js', 'package/dist/cli.js']));
    expect(await fileInTarball(tarball.gateway, 'LICENSE')).toBe(
      readFileSync(path.join(repositoryRoot, 'LICENSE'), 'utf8'),
    );
    // The workspace manifest is back as it was after packing.
    const workspace = JSON.parse(
      readFileSync(path.join(repositoryRoot, 'apps/gateway/package.json'), 'utf8'),
    );
    expect(workspace.devDependencies['@portico/filter-header']).toBeDefined();
  });

  it('installs outside the repository, and discovers no plugin of its own', async () => {
    expect(project.startsWith(repositoryRoot)).toBe(false);
    expect(existsSync(path.join(project, 'node_modules/@portico/gateway/src'))).toBe(false);
    expect(existsSync(path.join(project, 'node_modules/@portico/filter-header'))).toBe(false);
    const base = instanceDirectory({});
    const list = await runPortico(['plugin', 'list', '--base', base], { bin, cwd: project });
    expect([list.code, list.stderr]).toEqual([0, '']);
    expect(list.stdout.trim()).toBe('0 plugin packages; running @portico/gateway-core 0.1.0');
  });
});

describe('an instance with the two plugins it uses added', () => {
  let base: string;

  beforeAll(async () => {
    base = instanceDirectory({ 'config/routes/app.json': route(upstream.url) });
  });

  it('adds them with the installed portico plugin add', { timeout: 120_000 }, async () => {
    const added = await runPortico(['plugin', 'add', tarball.header, tarball.location, '--base', base], {
      bin,
      cwd: project,
    });
    expect([added.code, added.stderr]).toEqual([0, '']);
    expect(added.stdout).toContain(
      'added @portico/filter-header 0.1.0  HeaderFilter  (core >=0.1.0 <1.0.0: ok)',
    );
    expect(added.stdout).toContain('added @portico/filter-location-header 0.1.0  LocationHeaderFilter');
    const validated = await runPortico(['validate', '--base', base], { bin, cwd: project });
    expect([validated.code, validated.stderr]).toEqual([0, '']);
  });

  it('serves a request through both filters to the upstream, with the installed portico start', {
    timeout: 60_000,
  }, async () => {
    const gateway = await startGateway({ base, bin });
    try {
      const echoed = await send(`${gateway.url}/app/data`);
      expect(echoed.status).toBe(200);
      // HeaderFilter added a header to the request the upstream received.
      expect(JSON.parse(echoed.text)).toEqual({ url: '/app/data', portico: 'GET /app/data' });
      // LocationHeaderFilter turned the upstream's own Location into the gateway's.
      const redirected = await send(`${gateway.url}/app/login`);
      expect(redirected.status).toBe(302);
      expect(redirected.headers.location).toBe(`${gateway.url}/app/home`);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    expect(gateway.output()).not.toContain('PORTICO_E_');
    // The installed package's own code ran, not the repository's.
    expect(gateway.output()).not.toContain(repositoryRoot);
  });
});

describe('an instance without one of the plugins its route uses', () => {
  let base: string;

  beforeAll(async () => {
    base = instanceDirectory({ 'config/routes/app.json': route(upstream.url) });
    const added = await runPortico(['plugin', 'add', tarball.header, '--base', base], { bin, cwd: project });
    expect([added.code, added.stderr]).toEqual([0, '']);
  }, 120_000);

  it('portico validate names the package that provides the type, and the command that adds it', async () => {
    const result = await runPortico(['validate', '--base', base], { bin, cwd: project });
    expect(result.code).toBe(1);
    const line = result.stderr.split('\n').find((l) => l.startsWith('PORTICO_E_UNKNOWN_TYPE'));
    expect(line).toContain(path.join(base, 'config/routes/app.json'));
    expect(line).toContain("unknown type 'LocationHeaderFilter'");
    expect(line).toContain(LOCATION_ADVICE);
  });

  it('portico start says so of the route, and serves without it', { timeout: 60_000 }, async () => {
    const gateway = await startGateway({ base, bin });
    try {
      expect((await send(`${gateway.url}/app/data`)).status).toBe(404);
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    const notLoaded = gateway
      .output()
      .split('\n')
      .find((l) => l.includes('route not loaded'));
    expect(notLoaded).toContain('PORTICO_E_UNKNOWN_TYPE');
    expect(notLoaded).toContain(LOCATION_ADVICE);
  });
});
