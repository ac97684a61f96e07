import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { configurationSchemas, DOCUMENTS, type DocumentName } from '../schema/documents.ts';
import { installedTypes } from '../schema/installed-types.ts';
import { locateInstance } from '../server/instance.ts';
import { type Output, UsageError } from './output.ts';

/** The file each document is written to by `--out`. */
export const schemaFileName = (document: DocumentName): string => `${document}.schema.json`;

/**
 * `portico schema [--base DIR] [--out DIR] [--document admin|config|route]`: the JSON Schemas of
 * admin.json, config.json and route files, made from the settings of every type the instance's
 * gateway would find (the core's, its dependencies', `<instance>/plugins` and admin.json's
 * `pluginDirectories`). `--out` writes the three files there; otherwise the one `--document` names
 * (route by default) is printed. A plugin package the gateway would refuse is named on standard
 * error and its types are left out (they are then accepted loosely, as every unknown type is).
 */
export async function schemaCommand(argv: string[], out: Output): Promise<number> {
  const { base, directory, document } = parse(argv);
  const { types, refusals } = await installedTypes(locateInstance({ base }));
  for (const refusal of refusals) out.stderr(`warning: ${refusal}`);
  const schemas = configurationSchemas(types);
  if (directory === undefined) {
    out.stdout(JSON.stringify(schemas[document], null, 2));
    return 0;
  }
  mkdirSync(directory, { recursive: true });
  for (const name of DOCUMENTS) {
    const file = path.join(directory, schemaFileName(name));
    writeFileSync(file, `${JSON.stringify(schemas[name], null, 2)}\n`);
    out.stdout(file);
  }
  out.stdout(`${types.length} types described`);
  return 0;
}

function parse(argv: string[]): {
  base: string | undefined;
  directory: string | undefined;
  document: DocumentName;
} {
  let values: { base?: string; out?: string; document?: string };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { base: { type: 'string' }, out: { type: 'string' }, document: { type: 'string' } },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const document = values.document ?? 'route';
  if (!(DOCUMENTS as readonly string[]).includes(document))
    throw new UsageError(`--document takes ${DOCUMENTS.join(', ')}, not '${document}'`);
  if (values.out !== undefined && values.document !== undefined)
    throw new UsageError('--out writes every document: --document is for printing one');
  return { base: values.base, directory: values.out, document: document as DocumentName };
}
