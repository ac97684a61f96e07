import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const GREETING_PLUGIN = 'portico-plugin-greeting';

/**
 * The source of a third-party plugin as someone outside this repository would write it: plain ESM
 * JavaScript, no build step, no dependencies. Its manifest is a plain object with the brand (what
 * definePlugin makes) and its config schema is hand-written (any object with `parse(value, path,
 * ctx)` will do), so it needs nothing from the workspace to load.
 *
 * Its handler answers with a response object it builds itself (what the server's adapter writes:
 * status, reason, headers as [name, values] pairs, an entity with stream()/discard()). It also
 * reports, in `X-Plugin-Core`, where `@portico/gateway-core` resolves from the plugin's folder
 * (the gateway offers its own core to plugins that have none), and uses that core's PorticoError
 * for configuration problems when it can, so they are reported like the core's own.
 */
const INDEX_JS = `import { Readable } from 'node:stream';

let core = null;
let coreUrl = 'unresolved';
try {
  coreUrl = import.meta.resolve('@portico/gateway-core');
  core = await import('@portico/gateway-core');
} catch {
  // A plugin must work without it: everything below has a fallback.
}

function problem(ctx, path, message, expected) {
  const details = { jsonPath: path, expected, ...(ctx.file === undefined ? {} : { file: ctx.file }) };
  return core
    ? new core.PorticoError(core.ErrorCode.CONFIG, path + ': ' + message, details)
    : Object.assign(new Error(path + ': ' + message), { code: 'PORTICO_E_CONFIG', details });
}

/** {"name": string (default "world"), "status": integer 200-599 (default 200)}; nothing else. */
const greetingConfig = {
  parse(value, path, ctx) {
    const config = value ?? {};
    if (typeof config !== 'object' || Array.isArray(config)) {
      ctx.errors.push(problem(ctx, path, 'is not an object', 'an object'));
      return undefined;
    }
    let ok = true;
    for (const key of Object.keys(config)) {
      if (key !== 'name' && key !== 'status') {
        ctx.errors.push(problem(ctx, path + '.' + key, "unknown setting '" + key + "'", 'name or status'));
        ok = false;
      }
    }
    const name = config.name ?? 'world';
    if (typeof name !== 'string') {
      ctx.errors.push(problem(ctx, path + '.name', JSON.stringify(name) + ' is not a string', 'a string'));
      ok = false;
    }
    const status = config.status ?? 200;
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      ctx.errors.push(problem(ctx, path + '.status', JSON.stringify(status) + ' is not a status', '200 to 599'));
      ok = false;
    }
    return ok ? { name, status } : undefined;
  },
  jsonSchema() {
    return { type: 'object', properties: { name: { type: 'string' }, status: { type: 'integer' } } };
  },
  expected: 'an object',
};

/** A response as the server's adapter writes it, built without the core's classes. */
function textResponse(status, text, extraHeaders) {
  const body = Buffer.from(text, 'utf8');
  const headers = new Map([
    ['Content-Type', ['text/plain; charset=UTF-8']],
    ['Content-Length', [String(body.length)]],
    ...Object.entries(extraHeaders).map(([name, value]) => [name, [value]]),
  ]);
  return {
    status,
    reason: undefined,
    version: 'HTTP/1.1',
    headers,
    entity: {
      isBuffered: true,
      stream: () => Readable.from([body]),
      discard: () => {},
    },
  };
}

let created = 0;

export default {
  $$type: 'portico.plugin',
  name: '${GREETING_PLUGIN}',
  version: '1.0.0',
  core: '>=0.1.0',
  heaplets: [
    {
      type: 'GreetingHandler',
      kind: 'handler',
      config: greetingConfig,
      create({ config, name }) {
        created++;
        return {
          async handle(context, request) {
            const text = 'Hello, ' + config.name + '! You asked for ' + request.method + ' ' + request.uri.path;
            return textResponse(config.status, text, {
              'X-Plugin': '${GREETING_PLUGIN}/1.0.0',
              'X-Plugin-Object': name,
              'X-Plugin-Created': String(created),
              'X-Plugin-Core': coreUrl,
            });
          },
        };
      },
    },
  ],
};
`;

/**
 * Writes the plugin's package in a temporary folder outside the workspace, packs it with `npm pack`
 * and installs the tarball into `<base>/plugins` with `npm install --offline`, as an operator
 * would. Returns the tarball's path.
 */
export async function installGreetingPlugin(base: string): Promise<string> {
  const source = mkdtempSync(path.join(os.tmpdir(), 'portico-plugin-src-'));
  writeFileSync(
    path.join(source, 'package.json'),
    JSON.stringify(
      {
        name: GREETING_PLUGIN,
        version: '1.0.0',
        description: 'A third-party Portico plugin: a handler that greets',
        type: 'module',
        exports: { '.': './index.js', './package.json': './package.json' },
        files: ['index.js'],
        license: 'MIT',
        portico: { kind: 'handler', types: ['GreetingHandler'] },
      },
      null,
      2,
    ),
  );
  writeFileSync(path.join(source, 'index.js'), INDEX_JS);
  const packed = mkdtempSync(path.join(os.tmpdir(), 'portico-plugin-tgz-'));
  const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'error' };
  await run('npm', ['pack', '--pack-destination', packed], { cwd: source, env });
  const [tarball] = readdirSync(packed).filter((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack made no tarball in ${packed}`);
  const plugins = path.join(base, 'plugins');
  mkdirSync(plugins, { recursive: true });
  await run(
    'npm',
    ['install', '--prefix', plugins, path.join(packed, tarball), '--no-audit', '--no-fund', '--offline'],
    { cwd: plugins, env },
  );
  return path.join(packed, tarball);
}
