import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validate } from 'dockerfile-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { npm, repositoryRoot } from '../support/packing.ts';

/**
 * Beyond one machine (issue 43): the Dockerfile and the Kubernetes manifests, checked statically as
 * CI can here (no container engine, no cluster): the Dockerfile by a Dockerfile linter
 * (dockerfile-utils, the language server's) and for what the issue asks of it; the image's contents
 * by installing what its build stage packs, as its run stage does, and running that; the manifests by
 * decoding each strictly into the Kubernetes API's own Go types (deploy/check), and their routes by
 * `portico validate`.
 */
const root = repositoryRoot;
const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
const manifests = readdirSync(path.join(root, 'deploy/kubernetes'))
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => path.join(root, 'deploy/kubernetes', name));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'portico-deployment-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The instructions of each stage: keyword and arguments, continuation lines joined. */
function stages(text: string): { keyword: string; args: string }[][] {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
  const out: { keyword: string; args: string }[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') out.push([]);
    out.at(-1)?.push(instruction);
  }
  return out;
}

describe('the Dockerfile', () => {
  it('passes the Dockerfile linter, which refuses a broken one', () => {
    expect(validate(dockerfile).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const broken = dockerfile.replace('HEALTHCHECK --interval=10s', 'HEALTHCHECK --intervals=10s');
    expect(validate(broken).map((d) => d.message)).toEqual(['Unknown flag: intervals']);
  });

  it('builds in one stage and runs built JavaScript, as a non-root user, with a health check on the ping endpoint', () => {
    const [build, run, ...more] = stages(dockerfile);
    expect(more).toEqual([]);
    expect(build![0]!.args).toMatch(/^node:24\S* AS build$/);
    expect(build!.map((i) => i.args).join('\n')).toContain('node deploy/image-packages.mjs /packs');
    expect(run![0]!.args).toMatch(/^node:24\S*$/);
    // The run stage takes the packs from the build stage and nothing of the repository but the instance.
    const copies = run!.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies).toEqual([
      '--from=build /packs /tmp/packs',
      '--chown=node:node deploy/docker/instance/ /var/portico/',
    ]);
    expect(run!.find((i) => i.keyword === 'RUN')?.args).toContain('npm install --omit=dev');
    const users = run!.filter((i) => i.keyword === 'USER').map((i) => i.args);
    expect(users).toEqual(['node']);
    const userAt = run!.findIndex((i) => i.keyword === 'USER');
    expect(run!.slice(userAt).some((i) => i.keyword === 'RUN')).toBe(false);
    const health = run!.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
    expect(health).toContain('http://127.0.0.1:8080/openig/ping');
    const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8');
    expect(ignored).toMatch(/^\*\*\/node_modules$/m);
  });

  describe('what its run stage installs', () => {
    const project = path.join(scratch, 'opt-portico');
    const instance = path.join(scratch, 'var-portico');
    const packs = path.join(scratch, 'packs');

    beforeAll(async () => {
      // The build stage's last step, then the run stage's install, from the repository's built dist/.
      execFileSync(process.execPath, [path.join(root, 'deploy/image-packages.mjs'), packs], {
        stdio: 'pipe',
      });
      mkdirSync(project, { recursive: true });
      writeFileSync(
        path.join(project, 'package.json'),
        JSON.stringify({ name: 'portico-image', private: true }),
      );
      const tarballs = readdirSync(packs).map((name) => path.join(packs, name));
      await npm(
        ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs],
        project,
      );
      cpSync(path.join(root, 'deploy/docker/instance'), instance, { recursive: true });
      mkdirSync(path.join(instance, 'tmp'));
      symlinkSync(project, path.join(instance, 'plugins'));
    }, 300_000);

    it('holds the core, the server and every first-party plugin, built, without sources', () => {
      const installed = readdirSync(path.join(project, 'node_modules/@portico'));
      const firstParty = new Set(
        Object.values(
          JSON.parse(readFileSync(path.join(root, 'apps/gateway/src/first-party-types.json'), 'utf8')),
        ) as string[],
      );
      for (const name of firstParty) expect(installed).toContain(name.slice('@portico/'.length));
      expect(installed).toEqual(expect.arrayContaining(['gateway', 'gateway-core']));
      for (const name of installed)
        expect(readdirSync(path.join(project, 'node_modules/@portico', name))).not.toContain('src');
    });

    it('serves the example instance, and the health check command passes', async () => {
      const gw = await startGateway({
        base: instance,
        bin: path.join(project, 'node_modules/@portico/gateway/bin/portico.js'),
      });
      try {
        expect((await send(`${gw.url}/`)).text).toContain('Portico is running');
        const health = dockerfile
          .match(/"node", "-e", "(.*)"\]/)![1]!
          .replace(':8080/', `:${new URL(gw.url).port}/`);
        expect(spawnSync(process.execPath, ['-e', health]).status).toBe(0);
      } finally {
        expect(await gw.stop()).toBe(0);
      }
    });

    it("loads the Kubernetes ConfigMaps' admin.json and routes with portico validate", () => {
      // The image's instance, its config replaced by the ConfigMaps' files as the Deployment mounts them.
      const files = path.join(scratch, 'k8s-instance');
      mkdirSync(path.join(files, 'config/routes'), { recursive: true });
      symlinkSync(project, path.join(files, 'plugins'));
      for (const document of parseAllDocuments(
        readFileSync(path.join(root, 'deploy/kubernetes/portico.yaml'), 'utf8'),
      )) {
        const object = document.toJS();
        if (object?.kind !== 'ConfigMap') continue;
        const folder = object.metadata.name === 'portico-routes' ? 'config/routes' : 'config';
        for (const [name, text] of Object.entries(object.data as Record<string, string>))
          writeFileSync(path.join(files, folder, name), text);
      }
      expect(readdirSync(path.join(files, 'config/routes'))).toEqual(['10-app.json']);
      const result = spawnSync(
        process.execPath,
        [path.join(project, 'node_modules/@portico/gateway/bin/portico.js'), 'validate', '--base', files],
        {
          encoding: 'utf8',
          env: { ...process.env, REDIS_URI: 'redis://redis:6379', UPSTREAM_URI: 'http://app:8080' },
        },
      );
      expect(`${result.stdout}${result.stderr}`).toContain('configuration valid');
      expect(result.status).toBe(0);
    });
  });
});

const hasGo = spawnSync('go', ['version']).status === 0;
if (!hasGo) {
  if (process.env.CI)
    throw new Error('Go is required under CI to check the Kubernetes manifests (deploy/check)');
  console.warn('skipped: go is not installed; the Kubernetes manifests are not checked');
}

describe.skipIf(!hasGo)('the Kubernetes manifests (deploy/kubernetes)', () => {
  /** `go run ./deploy/check` on the files: its exit status and what it printed. */
  function check(files: string[]) {
    const result = spawnSync('go', ['run', '.', ...files], {
      cwd: path.join(root, 'deploy/check'),
      encoding: 'utf8',
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  }

  it('decode strictly into the Kubernetes API types and hold what the deployment relies on', () => {
    const result = check(manifests);
    expect(result.output).toContain('manifests valid');
    expect(result.status).toBe(0);
    const kinds = manifests.flatMap((file) =>
      parseAllDocuments(readFileSync(file, 'utf8')).map(
        (d) => `${d.toJS()?.kind} ${d.toJS()?.metadata?.name}`,
      ),
    );
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Deployment portico',
        'Service portico',
        'ConfigMap portico-routes',
        'Deployment redis',
        'Service redis',
      ]),
    );
  }, 300_000);

  it('refuse a misspelt field and a Deployment without its probes, naming each', () => {
    const text = readFileSync(path.join(root, 'deploy/kubernetes/portico.yaml'), 'utf8');
    const misspelt = path.join(scratch, 'misspelt.yaml');
    writeFileSync(misspelt, text.replace('terminationGracePeriodSeconds:', 'terminationGracePeriodSecond:'));
    const unprobed = path.join(scratch, 'unprobed.yaml');
    writeFileSync(unprobed, text.replace('readinessProbe:', 'startupProbe:'));
    const result = check([misspelt, unprobed]);
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      'misspelt.yaml: document 3: error unmarshaling JSON: while decoding JSON: json: unknown field "terminationGracePeriodSecond"',
    );
    expect(result.output).toContain(
      'unprobed.yaml: document 3: container "portico": readinessProbe is required',
    );
  }, 300_000);
});
