import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A keystore for the tamper-evident CSV audit, made by the JDK's keytool as the incumbents'
 * documentation makes it: an RSA key pair under `Signature` (SHA256withRSA) and an HmacSHA256
 * 256-bit secret key under `Password`, the key passwords the store's. `aliases` names them otherwise
 * (a keystore that lacks one).
 */
export function makeAuditKeystore(
  options: {
    type?: 'JCEKS' | 'PKCS12';
    password?: string;
    dir?: string;
    aliases?: { signature?: string; password?: string };
  } = {},
): { file: string; password: string } {
  const type = options.type ?? 'JCEKS';
  const password = options.password ?? 'audit-pass-Zq7';
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'portico-csv-keystore-'));
  const file = path.join(dir, `audit.${type.toLowerCase()}`);
  const common = ['-keystore', file, '-storetype', type, '-storepass', password, '-keypass', password];
  const keytool = (...args: string[]) =>
    execFileSync('keytool', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  keytool(
    '-genkeypair',
    '-noprompt',
    '-alias',
    options.aliases?.signature ?? 'Signature',
    '-dname',
    'CN=portico-audit',
    '-keyalg',
    'RSA',
    '-keysize',
    '2048',
    '-sigalg',
    'SHA256withRSA',
    '-validity',
    '3650',
    ...common,
  );
  keytool(
    '-genseckey',
    '-alias',
    options.aliases?.password ?? 'Password',
    '-keyalg',
    'HmacSHA256',
    '-keysize',
    '256',
    ...common,
  );
  return { file, password };
}
