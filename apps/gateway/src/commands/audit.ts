import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isPorticoError } from '@portico/gateway-core';
import {
  createMemoryLogger,
  discoverPluginPackages,
  importPackageEntry,
} from '@portico/gateway-core/runtime';
import { firstPartyProvider } from '../first-party.ts';
import { APP_PACKAGE_JSON, pluginDirectoriesOf } from '../server/gateway.ts';
import { locateInstance } from '../server/instance.ts';
import { type Output, UsageError } from './output.ts';

/** What `portico audit verify` uses of the CSV audit handler's package (its exports). */
interface CsvVerifier {
  verifyCsvFile(
    file: string,
    options: {
      keys?: unknown;
      format?: { quoteChar: string; delimiterChar: string; endOfLineSymbols: string };
    },
  ):
    | { ok: true; tamperEvident: boolean; rows: number; signatures: number }
    | { ok: false; tamperEvident: boolean; problem: string; row?: number };
  readTamperEvidenceKeys(bytes: Uint8Array, password: string): unknown;
  VerificationUsageError: new (...args: never[]) => Error;
}

const CSV_HANDLER = 'CsvAuditEventHandler';
/** Where the keystore password may come from instead of the command line, which `ps` shows. */
const PASSWORD_VARIABLE = 'PORTICO_AUDIT_KEYSTORE_PASSWORD';

/**
 * `portico audit verify [--keystore FILE --password PW] FILE...`: checks CSV audit files as the CSV
 * audit handler's package does (the command only wires it). A tamper-evident file is checked row by
 * row against its HMAC chain and signatures with the keystore that signed it; a plain file for its
 * form. One line per file; exit status 0 when every file is intact, 1 when one is not (its line
 * names the first row altered, removed, inserted or moved, or the cut end), 2 for a command line
 * or keystore that cannot be used.
 */
export async function auditCommand(argv: string[], out: Output): Promise<number> {
  const { values, positionals } = parse(argv);
  const [action, ...files] = positionals;
  if (action !== 'verify') {
    throw new UsageError(
      action === undefined ? 'audit needs an action: verify or schema' : `unknown audit action '${action}'`,
    );
  }
  if (files.length === 0) throw new UsageError('audit verify needs the CSV files to check');
  const password = values.password ?? process.env[PASSWORD_VARIABLE];
  if (values.keystore !== undefined && password === undefined) {
    throw new UsageError(`--keystore needs --password (or ${PASSWORD_VARIABLE})`);
  }
  if (values.keystore === undefined && values.password !== undefined) {
    throw new UsageError('--password goes with --keystore');
  }
  for (const file of files) {
    if (!existsSync(file)) throw new UsageError(`${file} does not exist`, { usage: false });
  }
  const format = {
    quoteChar: oneCharacter(values.quote ?? '"', '--quote'),
    delimiterChar: oneCharacter(values.delimiter ?? ',', '--delimiter'),
    endOfLineSymbols: '\n',
  };
  const verifier = await loadVerifier(values.base);
  let keys: unknown;
  if (values.keystore !== undefined) {
    try {
      keys = verifier.readTamperEvidenceKeys(readFileSync(values.keystore), password!);
    } catch (error) {
      throw new UsageError(
        `the keystore ${values.keystore} cannot be used: ${isPorticoError(error) || error instanceof Error ? error.message : String(error)}`,
        { usage: false },
      );
    }
  }
  let failed = 0;
  for (const file of files) {
    let result: ReturnType<CsvVerifier['verifyCsvFile']>;
    try {
      result = verifier.verifyCsvFile(file, { ...(keys === undefined ? {} : { keys }), format });
    } catch (error) {
      if (error instanceof verifier.VerificationUsageError)
        throw new UsageError(error.message, { usage: false });
      throw error;
    }
    if (result.ok) {
      const what = result.tamperEvident
        ? `${count(result.rows, 'row')} and ${count(result.signatures, 'signature')} verified`
        : `${count(result.rows, 'row')}, well formed (not tamper-evident: its content cannot be checked)`;
      out.stdout(`ok    ${file}: ${what}`);
    } else {
      failed++;
      out.stdout(`FAIL  ${file}: ${result.problem}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/**
 * The CSV audit handler's package, as the gateway would find it: among its own dependencies (a
 * checkout) or in the instance's plugin directories (`portico plugin add`).
 */
async function loadVerifier(base: string | undefined): Promise<CsvVerifier> {
  const instance = locateInstance({ base });
  const admin = (instance.admin ?? {}) as { pluginDirectories?: unknown };
  const configured = Array.isArray(admin.pluginDirectories)
    ? admin.pluginDirectories.filter((d): d is string => typeof d === 'string')
    : [];
  const packages = await discoverPluginPackages(
    { appPackageJson: APP_PACKAGE_JSON, pluginDirectories: pluginDirectoriesOf(instance, configured) },
    createMemoryLogger(),
  );
  const pkg = packages.find((p) => p.types.includes(CSV_HANDLER));
  if (pkg === undefined) {
    const provider = firstPartyProvider(CSV_HANDLER) ?? '@portico/audit-handler-csv';
    throw new UsageError(
      `audit verify needs ${provider}, which provides ${CSV_HANDLER}: portico plugin add ${provider}`,
      { usage: false },
    );
  }
  const module = (await importPackageEntry(pkg.packageDir)) as Partial<CsvVerifier>;
  if (typeof module.verifyCsvFile !== 'function' || typeof module.readTamperEvidenceKeys !== 'function') {
    throw new UsageError(`${pkg.packageName} in ${pkg.packageDir} exports no verifier: update it`, {
      usage: false,
    });
  }
  return module as CsvVerifier;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function oneCharacter(text: string, option: string): string {
  if ([...text].length !== 1) throw new UsageError(`${option} takes one character, not '${text}'`);
  return text;
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        keystore: { type: 'string' },
        password: { type: 'string' },
        delimiter: { type: 'string' },
        quote: { type: 'string' },
        base: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
