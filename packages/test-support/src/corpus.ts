import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, type PorticoError } from '@portico/gateway-core';
import { GROOVY_MIGRATION_GUIDE } from '@portico/gateway-core/scripting';

/**
 * The compatibility corpus: real configuration files written for the incumbent gateways, kept in
 * the shared folder beside the repository (`../shared/compat-corpus`). Tests use it by reference.
 */
export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const corpusRoot =
  process.env.PORTICO_CORPUS ?? path.resolve(repositoryRoot, '../shared/compat-corpus');

export function corpusAvailable(): boolean {
  return existsSync(corpusRoot);
}

/** Every JSON file of the corpus, as [path relative to the corpus, text]. */
export function corpusFiles(): [string, string][] {
  const out: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.json'))
        out.push([path.relative(corpusRoot, full), readFileSync(full, 'utf8')]);
    }
  };
  walk(corpusRoot);
  return out.sort(([a], [b]) => a.localeCompare(b));
}

/** True when `CI` is set to anything but an explicit no (`false`, `0`, empty). */
function underCi(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Whether the corpus suites can run. Under CI a missing corpus is an error (thrown at import, so the
 * test file fails); elsewhere the suites are skipped and one line says why.
 */
export function requireCorpusUnderCi(
  root: string = corpusRoot,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (existsSync(root)) return true;
  if (underCi(env)) {
    throw new Error(
      `the compatibility corpus is missing at ${root} (CI needs it; set PORTICO_CORPUS to its folder)`,
    );
  }
  console.warn(
    `compatibility corpus not found at ${root}: its tests are skipped (set PORTICO_CORPUS to run them)`,
  );
  return false;
}

/**
 * References the corpus cannot satisfy by itself: objects declared in a deployment's files that the
 * corpus does not hold (a config.json that is not published), and JNDI data sources a Java container
 * would provide. Any other reference problem (an object of the wrong kind, a misspelt decorator, a
 * decorator without `decorate`) is a real failure.
 */
const DEPLOYMENT_REFERENCES = /^(no heap object named |no data source named )/;

/**
 * Problems a corpus file may have today without being a compatibility failure: a type still to come,
 * a reference to what the deployment provides, a configuration token that needs its environment, a
 * deployment file the corpus does not hold, or a secret read from stores the declaration does not
 * see (a config.json's `secrets` block, declared outside the one declaration a suite loads).
 */
export function awaitsLaterWork(problem: PorticoError): boolean {
  return (
    problem.code === ErrorCode.UNKNOWN_TYPE ||
    (problem.code === ErrorCode.REFERENCE && DEPLOYMENT_REFERENCES.test(problem.message)) ||
    /configuration token '.*' has no value/.test(problem.message) ||
    // A file of the deployment that the corpus does not publish (a keystore under /var/secrets).
    /^the keystore file '.*' does not exist$/.test(problem.message) ||
    // A setting read from such a file: read() gives null for a file that is not there (OpenIG's
    // test route reads its OpenAPI document from a path its test writes in, `$$SWAGGER_FILE$$`).
    /^the setting evaluated to null \(\$\{read\('[^']*'\)\}\)$/.test(problem.message) ||
    (problem.code === ErrorCode.SECRET && /^no secret store is declared, /.test(problem.message))
  );
}

/**
 * Why Portico refuses what a problem reports on purpose, whatever types come, or undefined: a Groovy
 * script (Portico runs JavaScript; the error points to the migration guide).
 */
export function refusedByDesign(problem: PorticoError): string | undefined {
  return problem.code === ErrorCode.CONFIG && problem.message.includes(GROOVY_MIGRATION_GUIDE)
    ? 'a Groovy script: Portico runs JavaScript'
    : undefined;
}
