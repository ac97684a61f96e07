import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from './errors.ts';
import { UpstreamError } from './handlers/client/errors.ts';

const run = promisify(execFile);

/** Every class whose objects cross package boundaries: file, class, how the other copy makes one. */
const BRANDED: [string, string, string][] = [
  ['./duration/duration.ts', 'Duration', "m.Duration.parse('3 seconds')"],
  ['./http/headers.ts', 'Headers', 'new m.Headers()'],
  ['./http/entity.ts', 'Entity', 'new m.Entity(null)'],
  ['./http/uri.ts', 'Uri', "m.Uri.parse('http://example.com/x')"],
  ['./http/message.ts', 'Request', "new m.Request({ method: 'GET', uri: 'http://example.com/' })"],
  ['./http/message.ts', 'Response', 'new m.Response({ status: 200 })'],
  [
    './config/schema.ts',
    'Schema',
    "new (class extends m.Schema { expected = 'x'; parseValue() {} jsonSchema() { return {}; } })()",
  ],
  ['./expression/expression-error.ts', 'EvaluationError', "new m.EvaluationError('x')"],
  ['./handlers/client/proxy.ts', 'ProxyOptions', 'Object.create(m.ProxyOptions.prototype)'],
  ['./handlers/client/tls.ts', 'ClientTlsOptions', 'Object.create(m.ClientTlsOptions.prototype)'],
  ['./handlers/router.ts', 'Router', 'Object.create(m.Router.prototype)'],
];

/**
 * A second copy of the core, as npm may install one beside a plugin: the same files loaded again
 * under other URLs, so that their classes are other classes. Run in a plain Node process, where a
 * query string makes another module instance.
 */
const SCRIPT = `
const errorsUrl = ${JSON.stringify(new URL('./errors.ts', import.meta.url).href)};
const schemaUrl = ${JSON.stringify(new URL('./config/reference.ts', import.meta.url).href)};
const ours = { errors: await import(errorsUrl), schema: await import(schemaUrl) };
const theirs = { errors: await import(errorsUrl + '?copy'), schema: await import(schemaUrl + '?copy') };
const foreignError = new theirs.errors.PorticoError('PORTICO_E_CONFIG', 'from a plugin');
const foreignReference = new theirs.schema.Reference('filter', 'Name', '$.filter');
console.log(JSON.stringify({
  separate: theirs.errors.PorticoError !== ours.errors.PorticoError && theirs.schema.Reference !== ours.schema.Reference,
  error: foreignError instanceof ours.errors.PorticoError,
  isPorticoError: ours.errors.isPorticoError(foreignError, 'PORTICO_E_CONFIG'),
  back: new ours.errors.PorticoError('PORTICO_E_CONFIG', 'ours') instanceof theirs.errors.PorticoError,
  reference: foreignReference instanceof ours.schema.Reference,
  plainObject: ({ code: 'PORTICO_E_CONFIG' }) instanceof ours.errors.PorticoError,
}));
const classes = {};
${BRANDED.map(
  ([file, name, make]) => `{
  const url = new URL(${JSON.stringify(file)}, ${JSON.stringify(import.meta.url)}).href;
  const m = await import(url + '?copy');
  const mine = (await import(url))[${JSON.stringify(name)}];
  classes[${JSON.stringify(name)}] = [mine !== m[${JSON.stringify(name)}], (${make}) instanceof mine, ({}) instanceof mine];
}`,
).join('\n')}
console.log(JSON.stringify(classes));
`;

describe('identity across copies of the core', () => {
  it('a PorticoError or a Reference made by another copy is one here, and the other way round', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    expect(JSON.parse(stdout.split('\n')[0] ?? '')).toEqual({
      separate: true,
      error: true,
      isPorticoError: true,
      back: true,
      reference: true,
      plainObject: false,
    });
  });

  it('so is every other class whose objects cross package boundaries', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    const classes = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    expect(Object.keys(classes).sort()).toEqual(BRANDED.map(([, name]) => name).sort());
    for (const [name, [separate, foreign, plain]] of Object.entries(classes as Record<string, boolean[]>)) {
      expect({ name, separate, foreign, plain }).toEqual({
        name,
        separate: true,
        foreign: true,
        plain: false,
      });
    }
  });

  it('subclasses keep the precise check', () => {
    expect(new PorticoError(ErrorCode.UPSTREAM, 'plain') instanceof UpstreamError).toBe(false);
    const upstream = new UpstreamError('down', { failure: 'connect', origin: 'http://x:80', cause: null });
    expect(upstream instanceof UpstreamError).toBe(true);
    expect(upstream instanceof PorticoError).toBe(true);
  });
});
