import { parseArgs } from 'node:util';
import { type Output, UsageError } from './output.ts';

/** What `portico audit schema` uses of the JDBC audit handler's package (its exports). */
interface SchemaWriter {
  accessTableDdl(database: string, table?: string): string;
  SCHEMA_DATABASES: readonly string[];
}

const PACKAGE = '@portico/audit-handler-jdbc';

/**
 * `portico audit schema --database postgres|mysql|oracle|h2 [--table NAME]`: prints the statements
 * that create the default `auditaccess` table of JdbcAuditEventHandler (key on `id`, indexes on
 * `response_status` and `userid`), as the handler's package writes them; the command only wires it.
 * Exit 0; 2 for a command line that cannot be used or a gateway without the package.
 */
export async function auditSchemaCommand(argv: string[], out: Output): Promise<number> {
  const { values, positionals } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const writer = await loadWriter();
  const databases = writer.SCHEMA_DATABASES;
  if (values.database === undefined)
    throw new UsageError(`audit schema needs --database (${databases.join(', ')})`);
  const database = values.database.toLowerCase();
  if (!databases.includes(database))
    throw new UsageError(`--database takes ${databases.join(', ')}, not '${values.database}'`);
  const table = values.table ?? 'auditaccess';
  if (!/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(table))
    throw new UsageError(`--table takes a table name (letters, digits, _ and $), not '${table}'`);
  out.stdout(writer.accessTableDdl(database, table).trimEnd());
  return 0;
}

async function loadWriter(): Promise<SchemaWriter> {
  let module: Partial<SchemaWriter>;
  try {
    module = (await import(PACKAGE)) as Partial<SchemaWriter>;
  } catch {
    throw new UsageError(
      `audit schema needs ${PACKAGE}, which provides JdbcAuditEventHandler: portico plugin add ${PACKAGE}`,
      { usage: false },
    );
  }
  if (typeof module.accessTableDdl !== 'function' || !Array.isArray(module.SCHEMA_DATABASES))
    throw new UsageError(`${PACKAGE} exports no schema writer: update it`, { usage: false });
  return module as SchemaWriter;
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: { database: { type: 'string' }, table: { type: 'string' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
