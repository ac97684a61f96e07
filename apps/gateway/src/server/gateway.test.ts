import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode, type PorticoError } from '@portico/gateway-core';
import { createMemoryLogger, problemsOf } from '@portico/gateway-core/runtime';
import { beforeAll, describe, expect, it } from 'vitest';
import { Gateway } from './gateway.ts';
import { locateInstance } from './instance.ts';

/**
 * The TLS options of admin.json's connectors, resolved as the gateway loads: every file missing or
 * unreadable as PEM, and a key that is not the certificate's, is a coded problem naming admin.json
 * and the field, with OpenSSL's reason, instead of a stack trace when the listener is made.
 */
const logger = createMemoryLogger();
/** Two real key pairs (openssl), an encrypted copy of the first key, and a file of garbage. */
const pems = mkdtempSync(path.join(os.tmpdir(), 'portico-tls-pems-'));

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: pems, stdio: 'ignore' });
}

beforeAll(() => {
  for (const name of ['server', 'other']) {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
    );
  }
  openssl('ec', '-in', 'server.key', '-aes256', '-passout', 'pass:secret', '-out', 'encrypted.key');
  writeFileSync(path.join(pems, 'garbage.pem'), 'garbage\n');
});

/** An instance whose admin.json has one connector with these TLS settings; `files` copied from `pems`. */
function instanceWith(tls: unknown, files: string[] = [], routes: Record<string, unknown> = {}) {
  const base = mkdtempSync(path.join(os.tmpdir(), 'portico-tls-'));
  mkdirSync(path.join(base, 'config', 'routes'), { recursive: true });
  for (const file of files) copyFileSync(path.join(pems, file), path.join(base, 'config', file));
  writeFileSync(path.join(base, 'config', 'admin.json'), JSON.stringify({ connectors: [{ port: 0, tls }] }));
  for (const [name, route] of Object.entries(routes))
    writeFileSync(path.join(base, 'config', 'routes', name), JSON.stringify(route));
  return locateInstance({ base });
}

/** The problems Gateway.load throws, as [jsonPath, message]; fails when it loads. */
async function loadProblems(tls: unknown, files: string[] = []): Promise<[string, string][]> {
  const instance = instanceWith(tls, files);
  const error = await Gateway.load(instance, logger).then(
    async (gateway) => {
      await gateway.destroy();
      throw new Error('loaded');
    },
    (failure: unknown) => failure,
  );
  const problems = problemsOf(error);
  expect(problems.length, String(error)).toBeGreaterThan(0);
  for (const problem of problems) {
    expect(problem.code).toBe(ErrorCode.CONFIG);
    expect(problem.details.file).toBe(instance.adminFile);
  }
  return problems.map((p: PorticoError) => [p.details.jsonPath ?? '', p.message]);
}

describe('TLS connectors as the gateway loads', () => {
  it('a real key pair loads into the connector options', async () => {
    const gateway = await Gateway.load(
      instanceWith({ key: 'server.key', cert: 'server.pem', ca: 'other.pem' }, [
        'server.key',
        'server.pem',
        'other.pem',
      ]),
      logger,
    );
    try {
      expect(gateway.connectorTls[0]).toMatchObject({ requestCert: false, rejectUnauthorized: false });
      expect(String(gateway.connectorTls[0]?.cert)).toContain('BEGIN CERTIFICATE');
    } finally {
      await gateway.destroy();
    }
  });

  it('an encrypted key loads with its passphrase', async () => {
    const gateway = await Gateway.load(
      instanceWith({ key: 'encrypted.key', cert: 'server.pem', passphrase: 'secret' }, [
        'encrypted.key',
        'server.pem',
      ]),
      logger,
    );
    await gateway.destroy();
  });

  it('missing key and certificate files are two problems, each at its field', async () => {
    const problems = await loadProblems({ key: 'nokey.pem', cert: 'nocert.pem' });
    expect(problems).toEqual([
      [
        '$.connectors[0].tls.key',
        expect.stringMatching(/^cannot read the private key file: ENOENT.*nokey\.pem/),
      ],
      [
        '$.connectors[0].tls.cert',
        expect.stringMatching(/^cannot read the certificate file: ENOENT.*nocert\.pem/),
      ],
    ]);
  });

  it('files that hold no PEM are problems with the reason OpenSSL gives', async () => {
    const problems = await loadProblems({ key: 'garbage.pem', cert: 'garbage.pem' }, ['garbage.pem']);
    expect(problems).toEqual([
      [
        '$.connectors[0].tls.key',
        expect.stringMatching(/garbage\.pem cannot be read: error:.*DECODER routines/),
      ],
      [
        '$.connectors[0].tls.cert',
        expect.stringMatching(/garbage\.pem cannot be read: error:.*no start line/),
      ],
    ]);
  });

  it('a key that is not the certificate’s is a problem at the connector’s tls', async () => {
    const problems = await loadProblems({ key: 'other.key', cert: 'server.pem' }, [
      'other.key',
      'server.pem',
    ]);
    expect(problems).toEqual([['$.connectors[0].tls', expect.stringMatching(/key values mismatch/)]]);
  });

  it('a wrong passphrase, or none for an encrypted key, is said so', async () => {
    const files = ['encrypted.key', 'server.pem'];
    expect(
      await loadProblems({ key: 'encrypted.key', cert: 'server.pem', passphrase: 'wrong' }, files),
    ).toEqual([
      [
        '$.connectors[0].tls.passphrase',
        expect.stringMatching(/the passphrase does not decrypt it: .*bad decrypt/),
      ],
    ]);
    expect(await loadProblems({ key: 'encrypted.key', cert: 'server.pem' }, files)).toEqual([
      ['$.connectors[0].tls.key', expect.stringMatching(/no passphrase is given/)],
    ]);
  });

  it('a CA file without a certificate is a problem (OpenSSL would add nothing and say nothing)', async () => {
    const problems = await loadProblems({ key: 'server.key', cert: 'server.pem', ca: 'garbage.pem' }, [
      'server.key',
      'server.pem',
      'garbage.pem',
    ]);
    expect(problems).toEqual([['$.connectors[0].tls.ca', expect.stringMatching(/holds no certificate/)]]);
  });

  it('when validating, the TLS problems come from createAll and the routes are still loaded', async () => {
    const instance = instanceWith({ key: 'nokey.pem', cert: 'server.pem' }, ['server.pem'], {
      'broken.json': { handler: 'nothing-by-this-name' },
    });
    instance.environment.validating = true;
    const gateway = await Gateway.load(instance, logger);
    try {
      const problems = await gateway.createAll();
      expect(problems.map((p) => p.details.jsonPath)).toContain('$.connectors[0].tls.key');
      expect(gateway.connectorTls).toEqual([undefined]);
      const failures = gateway.routers().flatMap((router) => router.failures);
      expect(failures.map((f) => path.basename(f.file))).toEqual(['broken.json']);
    } finally {
      await gateway.destroy();
    }
  });
});

describe('an instance directory the user named', () => {
  it('is not served without its config directory; $HOME/.portico and the quickstart are as before', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-noconfig-'));
    const instance = locateInstance({ base, env: {} });
    await expect(Gateway.load(instance, logger)).rejects.toMatchObject({
      code: ErrorCode.CONFIG,
      message: `--base names ${base}, which has no config directory`,
    });
    // The same directory found another way (as $HOME/.portico is) serves, as it always did.
    const gateway = await Gateway.load({ ...instance, namedBy: undefined }, logger);
    await gateway.destroy();
  });
});
