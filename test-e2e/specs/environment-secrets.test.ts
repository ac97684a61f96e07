import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';
import { runPortico } from '../support/portico.ts';

/**
 * A password kept in the environment and put by mistake in fields of the wrong type: no message
 * prints it (the load's log, the routes API, `portico validate`), each still names the file, the
 * JSON path and what was expected; a wrong value written in the file is still quoted.
 */
const SECRET = 'Pa55w0rd-hunter2-Zq';
const env = { DB_PASSWORD: SECRET };

const files = {
  'config/config.json': { handler: { type: 'Router', config: { scanInterval: 'disabled' } } },
  'config/routes/10-db.json': {
    name: '10-db',
    heap: [
      {
        name: 'upstream',
        type: 'ClientHandler',
        config: { soTimeout: "${env['DB_PASSWORD']}", connections: "${env['DB_PASSWORD']}" },
      },
    ],
    handler: 'upstream',
  },
  // A configuration token read from the same variable (`db.password` is DB_PASSWORD).
  'config/routes/15-token.json': {
    name: '15-token',
    heap: [{ name: 'upstream', type: 'ClientHandler', config: { connections: '&{db.password}' } }],
    handler: 'upstream',
  },
  'config/routes/20-literal.json': {
    name: '20-literal',
    heap: [{ name: 'upstream', type: 'ClientHandler', config: { connections: 'many' } }],
    handler: 'upstream',
  },
};

const expected = {
  connections: 'an integer of at least 1',
  soTimeout: 'a duration such as "10 seconds" or "unlimited"',
};

/** The problem line of `file` at `jsonPath`, as `validate` and the log print it. */
function line(base: string, file: string, field: keyof typeof expected, shown: string): string {
  const full = path.join(base, 'config', 'routes', file);
  return `PORTICO_E_CONFIG ${full} $.heap[0].config.${field}: ${shown} is not ${expected[field]} (expected ${expected[field]})`;
}

/** How the secret's messages show it. */
const shown = `the value of \${env['DB_PASSWORD']} (${SECRET.length} characters, not shown)`;
const shownToken = `the value of &{db.password} (${SECRET.length} characters, not shown)`;

describe('values from the environment in messages', () => {
  const base = instanceDirectory(files);
  let gw: RunningGateway;

  beforeAll(async () => {
    gw = await startGateway({ base, env });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('portico validate describes them, names file, JSON path and expectation, and quotes a written value', async () => {
    const result = await runPortico(['validate', '--base', base], { env });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      line(base, '10-db.json', 'connections', shown),
      line(base, '10-db.json', 'soTimeout', shown),
      line(base, '15-token.json', 'connections', shownToken),
      line(base, '20-literal.json', 'connections', '"many"'),
      '4 problems found',
    ]);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });

  it('the routes API describes them', async () => {
    const { text } = await send(`${gw.url}/openig/api/routes`);
    expect(text).not.toContain(SECRET);
    const body = JSON.parse(text);
    const failures = body.routers[0].failures as {
      id: string;
      problems: { file: string; jsonPath: string; expected: string; message: string }[];
    }[];
    const db = failures.find((f) => f.id === '10-db')!;
    expect(db.problems).toEqual([
      expect.objectContaining({
        file: path.join(base, 'config', 'routes', '10-db.json'),
        jsonPath: '$.heap[0].config.connections',
        expected: expected.connections,
        message: `${shown} is not ${expected.connections}`,
      }),
      expect.objectContaining({ jsonPath: '$.heap[0].config.soTimeout', expected: expected.soTimeout }),
    ]);
    const token = failures.find((f) => f.id === '15-token')!;
    expect(token.problems[0]!.message).toBe(`${shownToken} is not ${expected.connections}`);
    const literal = failures.find((f) => f.id === '20-literal')!;
    expect(literal.problems[0]!.message).toBe(`"many" is not ${expected.connections}`);
  });

  it('the log describes them', () => {
    const output = gw.output();
    expect(output).not.toContain(SECRET);
    const logged = output
      .split('\n')
      .filter((l) => l.includes('route not loaded'))
      .map((l) => JSON.parse(l) as { problems: string[] });
    expect(logged.flatMap((l) => l.problems)).toEqual(
      expect.arrayContaining([
        line(base, '10-db.json', 'connections', shown),
        line(base, '10-db.json', 'soTimeout', shown),
        line(base, '15-token.json', 'connections', shownToken),
        line(base, '20-literal.json', 'connections', '"many"'),
      ]),
    );
  });
});

describe('values from the environment checked as objects are built', () => {
  // A base URI kept in the environment may carry credentials; this one has a port out of range.
  const UPSTREAM = `http://gw-user:${SECRET}@upstream.example:99999`;
  const env = { UPSTREAM_BASE: UPSTREAM, DB_PASSWORD: SECRET };
  const base = instanceDirectory({
    'config/config.json': { handler: { type: 'Router', config: { scanInterval: '&{db.password}' } } },
    'config/routes/30-base.json': {
      name: '30-base',
      baseURI: "${env['UPSTREAM_BASE']}",
      heap: [{ name: 'upstream', type: 'ClientHandler', config: { trustedProxies: ['&{db.password}'] } }],
      handler: 'upstream',
    },
  });

  it('portico validate describes the baseURI, trustedProxies and scanInterval, with file, JSON path and expectation', async () => {
    const result = await runPortico(['validate', '--base', base], { env });
    const config = path.join(base, 'config');
    const route = path.join(config, 'routes', '30-base.json');
    const scan = 'a duration such as "10 seconds", or "disabled"';
    const proxy = 'an IP address (10.0.0.7, ::1) or a CIDR block (10.0.0.0/8, fd00::/8)';
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `PORTICO_E_CONFIG ${path.join(config, 'config.json')} $.handler.config.scanInterval: ${shownToken} is not ${scan} (expected ${scan})`,
      `PORTICO_E_CONFIG ${route} $.heap[0].config.trustedProxies[0]: ${shownToken} is not ${proxy} (expected ${proxy})`,
      `PORTICO_E_CONFIG ${route} $.baseURI: port out of range in the value of \${env['UPSTREAM_BASE']} (${UPSTREAM.length} characters, not shown) (expected a port from 0 to 65535)`,
      '3 problems found',
    ]);
    expect(result.stdout + result.stderr).not.toContain(SECRET);
  });
});
