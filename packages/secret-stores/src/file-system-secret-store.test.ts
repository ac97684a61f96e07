import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '@portico/gateway-core';
import { problemsOf, resolveTokens } from '@portico/gateway-core/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { FILE_CACHE_ENTRIES, MAX_SECRET_FILE } from './file-system-secret-store.ts';
import { failure, said, storeOf } from './test-helpers.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const MARKER = 'marker-Zq7-value';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'portico-fs-store-'));
});
const write = (name: string, text: string | Buffer) => writeFileSync(path.join(dir, name), text);
const store = (config: Record<string, unknown> = {}) =>
  storeOf({ type: 'FileSystemSecretStore', config: { directory: dir, ...config } });

describe('FileSystemSecretStore', () => {
  it('reads the file named by the ID, base64-decoded by default', async () => {
    write('agent.password', `${b64('s3cret')}\n`);
    const { secret } = await store();
    expect(await secret('agent.password', 'password')).toBe('s3cret');
  });

  it('reads PLAIN files as they are, but for one final line break', async () => {
    write('plain', 'two words\n');
    write('crlf', 'windows\r\n');
    write('inner', 'line one\nline two');
    const { secret } = await store({ format: 'PLAIN' });
    expect(await secret('plain', 'password')).toBe('two words');
    expect(await secret('crlf', 'password')).toBe('windows');
    expect(await secret('inner', 'password')).toBe('line one\nline two');
  });

  it('appends suffix to the ID to name the file', async () => {
    write('agent.password.txt', b64('with-suffix'));
    write('agent.password', b64('without'));
    const { secret } = await store({ suffix: '.txt' });
    expect(await secret('agent.password', 'password')).toBe('with-suffix');
  });

  it('takes the format of a mapping for its ID', async () => {
    write('mapped', 'as-is');
    write('other', b64('decoded'));
    const { secret } = await store({ mappings: [{ secretId: 'mapped', format: 'PLAIN' }] });
    expect(await secret('mapped', 'password')).toBe('as-is');
    expect(await secret('other', 'password')).toBe('decoded');
  });

  it('reads a relative directory from the instance directory', async () => {
    mkdirSync(path.join(dir, 'secrets'));
    write('secrets/rel', b64('relative'));
    const { secret } = await storeOf(
      { type: 'FileSystemSecretStore', config: { directory: 'secrets' } },
      { environment: { baseDirectory: dir } },
    );
    expect(await secret('rel', 'password')).toBe('relative');
  });

  it('gives keys of PEM files and secret keys of bytes', async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    write('signing.pem', pair.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string);
    write('hmac', Buffer.from('k'.repeat(32)).toString('base64'));
    const { secret } = await store();
    const first = await secret('signing.pem', 'private-key');
    expect(first.equals(pair.privateKey)).toBe(true);
    // Kept while the file is unchanged: the same key, not decoded again.
    expect(await secret('signing.pem', 'private-key')).toBe(first);
    expect((await secret('signing.pem', 'public-key')).equals(pair.publicKey)).toBe(true);
    expect((await secret('hmac', 'secret-key')).export().toString()).toBe('k'.repeat(32));
  });

  it('reads a file when asked, and again when it changed', async () => {
    const { secret } = await store({ format: 'PLAIN' });
    // Not there when the store is made: read when asked, not before.
    write('rotating', 'first');
    expect(await secret('rotating', 'password')).toBe('first');
    write('rotating', 'second-value');
    expect(await secret('rotating', 'password')).toBe('second-value');
    // Same size, later modification time.
    write('rotating', 'third--value');
    const later = new Date(Date.now() + 5000);
    utimesSync(path.join(dir, 'rotating'), later, later);
    expect(await secret('rotating', 'password')).toBe('third--value');
    rmSync(path.join(dir, 'rotating'));
    expect((await failure(secret('rotating', 'password'))).message).toContain('no secret store holds');
  });

  it(`keeps at most ${FILE_CACHE_ENTRIES} files, still reading every one`, async () => {
    for (let i = 0; i <= FILE_CACHE_ENTRIES; i++) write(`f${i}`, `v${i}`);
    const { secret } = await store({ format: 'PLAIN' });
    for (let i = 0; i <= FILE_CACHE_ENTRIES; i++) expect(await secret(`f${i}`, 'password')).toBe(`v${i}`);
    expect(await secret('f0', 'password')).toBe('v0');
  });

  it('holds no ID that would leave the directory, nor one naming a directory', async () => {
    mkdirSync(path.join(dir, 'inner'));
    write('inner/x', b64('nested'));
    writeFileSync(path.join(path.dirname(dir), 'outside-secret'), b64(MARKER));
    const { secret } = await store();
    for (const id of ['inner/x', `../${path.basename(dir)}/inner/x`, '..', '.', 'inner', 'a\\b']) {
      const error = await failure(secret(id, 'password'));
      expect(error.message).toContain('no secret store holds');
    }
    const outside = await failure(secret('../outside-secret', 'password'));
    expect(said(outside)).not.toContain(MARKER);
    rmSync(path.join(path.dirname(dir), 'outside-secret'));
  });

  it('describes a directory a token gave, not quoting it', async () => {
    const declaration = resolveTokens(
      { type: 'FileSystemSecretStore', config: { directory: '&{secrets.dir}' } },
      { env: { SECRETS_DIR: path.join(dir, MARKER) } },
    ) as { type: string };
    const { secret } = await storeOf(declaration);
    const error = await failure(secret('x', 'password'));
    expect(error.message).toBe(
      `the directory named by the value of &{secrets.dir} (${path.join(dir, MARKER).length} characters, not shown) of FileSystemSecretStore does not exist`,
    );
    expect(said(error)).not.toContain(MARKER);
  });

  it('says the directory does not exist, and a file cannot be read, without a value', async () => {
    const { secret } = await storeOf({
      type: 'FileSystemSecretStore',
      config: { directory: path.join(dir, 'none') },
    });
    const missing = await failure(secret('x', 'password'));
    expect(missing.code).toBe(ErrorCode.SECRET);
    expect(missing.message).toBe(
      `the directory '${path.join(dir, 'none')}' of FileSystemSecretStore does not exist`,
    );
    write('locked', b64(MARKER));
    chmodSync(path.join(dir, 'locked'), 0o000);
    const { secret: locked } = await store();
    // Root reads any file: the refusal is checked where the test does not run as root.
    if (process.getuid?.() !== 0) {
      const error = await failure(locked('locked', 'password'));
      expect(error.message).toBe(
        "FileSystemSecretStore cannot read the file of the secret 'locked' (EACCES)",
      );
    }
  });

  it('refuses a file larger than 1 MiB', async () => {
    write('big', Buffer.alloc(MAX_SECRET_FILE + 1, 65));
    const { secret } = await store({ format: 'PLAIN' });
    expect((await failure(secret('big', 'password'))).message).toBe(
      "the file of the secret 'big' of FileSystemSecretStore is larger than 1 MiB",
    );
  });

  it('says a file that is not base64 is not, without showing it', async () => {
    write('bad', `${MARKER}!`);
    const { secret } = await store();
    for (const purpose of ['password', 'secret-key', 'private-key', 'public-key'] as const) {
      const error = await failure(secret('bad', purpose));
      expect(error.code).toBe(ErrorCode.SECRET);
      expect(said(error)).not.toContain(MARKER);
    }
  });

  it('requires directory; checks suffix, format, leaseExpiry; accepts autoRefresh', async () => {
    const problems = problemsOf(
      await failure(
        storeOf({ type: 'FileSystemSecretStore', config: { suffix: 3, leaseExpiry: 'never ever' } }),
      ),
    );
    expect(problems.map((p) => p.details.jsonPath).sort()).toEqual([
      '$.heap[0].config.directory',
      '$.heap[0].config.leaseExpiry',
      '$.heap[0].config.suffix',
    ]);
    write('ok', b64('fine'));
    const { secret } = await store({ leaseExpiry: '10 minutes', autoRefresh: { enabled: true } });
    expect(await secret('ok', 'password')).toBe('fine');
  });
});
