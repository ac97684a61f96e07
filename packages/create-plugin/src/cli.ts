import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  checkKind,
  checkTypeName,
  defaultTypeName,
  type Kind,
  ScaffoldError,
  standalonePackage,
  type TemplateSource,
} from './scaffold.ts';
import { carriedTemplate, repositoryTemplate, TEMPLATE_FOLDER } from './template-source.ts';

export const USAGE = `Usage: npm init @portico/plugin <directory> [-- options]
       create-plugin <directory> [options]

Writes a Portico plugin package in <directory> (new, or empty): one type, its test, its own
tsconfig.json and vitest.config.ts, @portico/gateway-core as a peer dependency and as a development
dependency. Then: cd <directory> && npm install && npm test.

Options:
  --kind <kind>    filter (default), decorator, handler, audit-handler or object
  --type <Name>    the type's name (default: from the directory and the kind, e.g. UserInfoFilter)
  --name <name>    the npm package name (default: the directory's name)
  --core <spec>    the development dependency on the core (default: ^<the current core>; a
                   file:<tarball> of a core packed elsewhere works too)`;

/** npm's rule for a package name (lower case, URL-safe, an optional scope), checked up front. */
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** The words of a directory name that say nothing about the type (`portico-filter-user` → user). */
const NOISE = new Set(['portico', 'plugin', 'filter', 'decorator', 'handler', 'audit', 'object']);

export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: Output = {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
};

/** Where the scaffold's input is: carried in the published package, else this repository's template. */
function templateSource(): TemplateSource {
  const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const carried = carriedTemplate(packageDir);
  if (carried !== undefined) return carried;
  const root = path.resolve(packageDir, '../..');
  if (existsSync(path.join(root, TEMPLATE_FOLDER))) return repositoryTemplate(root);
  throw new Error(`${packageDir} carries no template.json (it is written when the package is packed)`);
}

/** The type a directory's name suggests: `acme-portico-filter-user` and `filter` give AcmeUserFilter. */
export function typeFromDirectory(kind: Kind, directory: string): string {
  const words = path
    .basename(directory)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && !NOISE.has(word));
  const name = words.length > 0 && /^[a-z]/.test(words[0]!) ? words.join('-') : 'my';
  return defaultTypeName(kind, name);
}

/** `create-plugin <directory> [--kind ...] [--type ...] [--name ...] [--core ...]`; the exit code. */
export function main(argv: readonly string[], out: Output = processOutput, cwd = process.cwd()): number {
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (error) {
      throw new ScaffoldError((error as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out.stdout(USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new ScaffoldError('give one directory to write the package in');
    const directory = path.resolve(cwd, positionals[0]!);
    const kind = checkKind(values.kind ?? 'filter');
    const type = checkTypeName(values.type ?? typeFromDirectory(kind, directory));
    const packageName = values.name ?? path.basename(directory).toLowerCase();
    if (!PACKAGE_NAME.test(packageName) || packageName.length > 214) {
      throw new ScaffoldError(`'${packageName}' is not a valid npm package name: give one with --name`);
    }
    if (existsSync(directory) && readdirSync(directory).length > 0) {
      throw new ScaffoldError(`${directory} exists and is not empty`);
    }
    const files = standalonePackage(templateSource(), {
      packageName,
      folder: path.basename(directory),
      description: `${type}: a Portico ${kind === 'audit-handler' ? 'audit handler' : kind}`,
      version: '0.1.0',
      types: { [kind]: type },
      ...(values.core === undefined ? {} : { coreSpec: values.core }),
    });
    for (const [file, text] of files) {
      const target = path.join(directory, file);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    const shown = path.relative(cwd, directory) || '.';
    out.stdout(
      `created ${shown}: ${packageName} with ${type} (${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind})\n` +
        `next: cd ${shown} && npm install && npm test`,
    );
    return 0;
  } catch (error) {
    if (error instanceof ScaffoldError) {
      out.stderr(`${error.code}: ${error.message} (create-plugin --help)`);
      return 2;
    }
    throw error;
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      kind: { type: 'string' },
      type: { type: 'string' },
      name: { type: 'string' },
      core: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
