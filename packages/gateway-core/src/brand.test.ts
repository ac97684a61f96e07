import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from './errors.ts';
import { UpstreamError } from './handlers/client/errors.ts';

const run = promisify(execFile);

/**
 * A second copy of the core, as npm may install one beside a plugin: the same files loaded again
 * under other URLs, so that their classes are other classes. Run in a plain Node process, where a
 * query string makes another module instance.
 */
const SCRIPT = `
const errorsUrl = ${JSON.stringify(new URL('./errors.ts', import.meta.url).href)};
const schemaUrl = ${JSON.stringify(new URL('./config/schema.ts', import.meta.url).href)};
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
`;

describe('identity across copies of the core', () => {
  it('a PorticoError or a Reference made by another copy is one here, and the other way round', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    expect(JSON.parse(stdout)).toEqual({
      separate: true,
      error: true,
      isPorticoError: true,
      back: true,
      reference: true,
      plainObject: false,
    });
  });

  it('subclasses keep the precise check', () => {
    expect(new PorticoError(ErrorCode.UPSTREAM, 'plain') instanceof UpstreamError).toBe(false);
    const upstream = new UpstreamError('down', { failure: 'connect', origin: 'http://x:80', cause: null });
    expect(upstream instanceof UpstreamError).toBe(true);
    expect(upstream instanceof PorticoError).toBe(true);
  });
});
