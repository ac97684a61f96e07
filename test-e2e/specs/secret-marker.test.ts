import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';
import {
  casePath,
  MARKER,
  markerEnvironment,
  markerFiles,
  markerForms,
  markerProperties,
  secretCases,
  UPSTREAM_VARIABLE,
} from '../support/secret-cases.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/**
 * A marker kept in environment variables and system properties, fed through every setting that
 * takes a secret or a token (support/secret-cases.ts, where packages add theirs), rightly or by
 * mistake, in the real gateway: the marker is in no output. Searched: the gateway's standard output
 * and error (at every log level), every file it wrote under logs/ (a capture decorator logs every
 * exchange with its entity and contexts), every HTTP answer (the routes' and the routes API's), and
 * the output of `portico validate` and of a `portico start` that cannot start.
 */
const systemProperties = Object.entries(markerProperties).map(([name, value]) => `-D${name}=${value}`);
const env: Record<string, string> = { ...markerEnvironment };

const routeFiles = Object.fromEntries(
  secretCases.map(({ id, route }) => [
    `config/routes/${id}.json`,
    // Each route's handler is captured too, besides the Router's.
    { name: id, condition: `\${request.uri.path == '${casePath(id)}'}`, capture: 'all', ...route },
  ]),
);

const files = {
  'config/config.json': {
    heap: [
      // What objects log goes to a file too, which is searched with the process's output.
      { name: 'LogSink', type: 'FileLogSink', config: { file: 'logs/gateway.log', level: 'ALL' } },
      { name: 'CaptureFile', type: 'FileLogSink', config: { file: 'logs/capture.log' } },
      {
        name: 'capture',
        type: 'CaptureDecorator',
        config: { captureEntity: true, captureContext: true, logSink: 'CaptureFile' },
      },
    ],
    handler: { type: 'Router', config: { scanInterval: 'disabled' }, capture: 'all' },
  },
  ...routeFiles,
};

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): [string, string][] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return [file, readFileSync(file, 'utf8')];
    });
}

/**
 * The outputs that hold the marker (or one of its other forms: its base64, an `Authorization` value
 * made of it), each with the text around its first occurrence.
 */
function holdingMarker(outputs: Record<string, string>): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, text] of Object.entries(outputs)) {
    for (const form of markerForms) {
      const at = text.indexOf(form);
      if (at >= 0) found[name] = text.slice(Math.max(0, at - 200), at + form.length + 100);
    }
  }
  return found;
}

describe('a secret from the environment is in no output', () => {
  const base = instanceDirectory(files);
  for (const [file, content] of Object.entries(markerFiles)) {
    mkdirSync(path.dirname(path.join(base, file)), { recursive: true });
    writeFileSync(path.join(base, file), content);
  }
  let gw: RunningGateway;
  let upstream: Upstream;
  /** Every output searched, by a name saying where it comes from. */
  const outputs: Record<string, string> = {};

  beforeAll(async () => {
    // An upstream that refuses every request with a Basic challenge, whatever credentials it gets.
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        upstream.received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyLength: 0 });
        // But for the route whose credentials it accepts.
        const accepted =
          req.url!.startsWith(casePath('filter-http-basic-auth-accepted')) &&
          req.headers.authorization === `Basic ${markerForms[2]}`;
        if (accepted) {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.end('yes');
          return;
        }
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="marker"', 'Content-Type': 'text/plain' });
        res.end('no');
      });
    });
    env[UPSTREAM_VARIABLE] = upstream.url;
    // Every level: what filters log at debug level (a replayed login, credentials refused) too.
    gw = await startGateway({ base, env: { ...env, PORTICO_LOG_LEVEL: 'trace' }, args: systemProperties });
  });
  afterAll(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('loads or refuses every route of the cases, and describes the marker where it is wrong', async () => {
    const reply = await send(`${gw.url}/openig/api/routes`);
    outputs['GET /openig/api/routes'] = reply.text;
    const body = JSON.parse(reply.text) as {
      routers: { routes: { id: string }[]; failures: { id: string }[] }[];
    };
    const ids = body.routers.flatMap((r) => [...r.routes, ...r.failures].map((route) => route.id));
    expect(ids.sort()).toEqual(secretCases.map((c) => c.id).sort());
    // The marker did reach the gateway, from a variable and from a property.
    expect(reply.text).toContain(`the value of &{mk.secret} (${MARKER.length} characters, not shown)`);
    expect(reply.text).toContain(`the value of &{mk.prop} (${MARKER.length} characters, not shown)`);
  });

  it('answers a request for each case, and one no route takes', async () => {
    // Twice: an expression's warnings are logged once a minute, each time with what it names.
    const paths = [...secretCases.map((c) => casePath(c.id)), '/secret-marker/nothing'];
    paths.push(...paths.map((p) => `${p}?again`));
    for (const requestPath of paths) {
      const reply = await send(`${gw.url}${requestPath}`, { headers: { 'X-Marker-Test': 'capture' } });
      outputs[`GET ${requestPath}`] = `${reply.status}\n${JSON.stringify(reply.headers)}\n${reply.text}`;
    }
    // Once more with the session the accepted Basic credentials were kept in, which replays them.
    const acceptedPath = casePath('filter-http-basic-auth-accepted');
    const first = await send(`${gw.url}${acceptedPath}`);
    const cookie = String(first.headers['set-cookie'] ?? '').split(';')[0]!;
    const replayed = await send(`${gw.url}${acceptedPath}?session`, { headers: { Cookie: cookie } });
    expect(replayed.status).toBe(200);
    outputs[`GET ${acceptedPath}?session`] = `${replayed.status}\n${JSON.stringify(replayed.headers)}`;
    // The capture decorator wrote each exchange, with its entity and contexts.
    const captured = () =>
      filesUnder(path.join(base, 'logs'))
        .map(([, text]) => text)
        .join('\n');
    for (let i = 0; i < 50 && !captured().includes('/secret-marker/nothing'); i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(captured()).toContain('--- context ---');
    // The Basic credentials and the login form did reach the upstream, and the capture of the
    // request HttpBasicAuthFilter sent masks its Authorization header.
    const sent = upstream.received;
    expect(sent.some((r) => r.headers.authorization?.startsWith('Basic '))).toBe(true);
    expect(sent.some((r) => r.method === 'POST' && r.url === '/login')).toBe(true);
    expect(captured()).toContain('Authorization: *****');
  });

  it('portico validate describes the marker, never prints it', async () => {
    const result = await runPortico(['validate', '--base', base, ...systemProperties], { env });
    outputs['portico validate (stdout)'] = result.stdout;
    outputs['portico validate (stderr)'] = result.stderr;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`(${MARKER.length} characters, not shown)`);
  });

  it.each([
    [
      'admin.json',
      { 'config/admin.json': { session: { store: { type: 'redis', uri: '&{mk.sentinel.host}' } } } },
    ],
    [
      'config.json',
      {
        'config/config.json': {
          heap: [{ name: 'x', type: '&{mk.secret}' }, '&{mk.prop}'],
          handler: '&{mk.prop}',
          logSink: { type: 'FileLogSink', config: { file: '&{mk.secret}' } },
        },
      },
    ],
  ])('a gateway whose %s is wrong does not print it, validating or starting', async (name, broken) => {
    const instance = instanceDirectory(broken);
    for (const command of [['validate'], ['start', '--port', '0']]) {
      const result = await runPortico([...command, '--base', instance, ...systemProperties], {
        env,
        timeoutMs: 20_000,
      });
      outputs[`portico ${command[0]}, wrong ${name} (stdout)`] = result.stdout;
      outputs[`portico ${command[0]}, wrong ${name} (stderr)`] = result.stderr;
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/the value of &\{mk\.[a-z.]+\} \(\d+ characters, not shown\)/);
    }
    for (const [file, text] of filesUnder(instance)) outputs[file] = text;
  });

  it('holds no marker in any output', () => {
    outputs['portico start (stdout and stderr)'] = gw.output();
    // Debug records were written, and searched.
    expect(gw.output()).toContain('"level":20');
    for (const [file, text] of filesUnder(path.join(base, 'logs'))) outputs[file] = text;
    expect(Object.keys(outputs).length).toBeGreaterThan(5);
    expect(holdingMarker(outputs)).toEqual({});
  });
});
