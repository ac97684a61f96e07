import { type Output, processOutput, UsageError } from './commands/output.ts';

interface Command {
  /** One line for the list of commands. */
  summary: string;
  /** The command line and its options, as `portico <command> --help` prints them. */
  usage: string;
  run(argv: string[], out: Output): Promise<number>;
}

// Each command's module is imported when that command runs: `portico start` does not load what
// `plugin add` needs (npm through child_process) or `eval` and `validate` (about 10 built-in
// modules fewer before the first request; bench/README.md, "Startup").

const COMMANDS: Record<string, Command> = {
  start: {
    summary: 'Serve the configuration of the instance directory (or the embedded quickstart)',
    usage: `Usage: portico start [options]

Serves the configuration of the instance directory, or the embedded quickstart when there is none.
SIGTERM, SIGINT or SIGHUP stops accepting, lets in-flight requests finish and exits 0.

Options:
  --base DIR             instance directory (default: $PORTICO_BASE, else $HOME/.portico)
  --port N, --host H     listen there instead of admin.json's connectors (--host alone:
                         their ports, at that host)
  --workers N            processes (default: one per core; 1 for a single process)
  --log-format json|pretty
  -Dname=value           set a system property (repeatable)
  -h, --help             show this text`,
    run: async (argv, out) => (await import('./commands/start.ts')).startCommand(argv, out),
  },
  validate: {
    summary: 'Load everything without serving; print every problem and warning',
    usage: `Usage: portico validate [options]

Loads admin.json, config.json and every route file, creating every declared object, without
serving. Prints every problem (code, file, JSON path, what was expected) and warning, then one line
per file. Exit status: 0 when there is no problem, 1 when there is one (or, with --strict, a warning).

Options:
  --base DIR             instance directory (default: $PORTICO_BASE, else $HOME/.portico)
  --strict               warnings fail too (exit 1)
  -Dname=value           set a system property (repeatable), as portico start does
  -h, --help             show this text`,
    run: async (argv, out) => (await import('./commands/validate.ts')).validateCommand(argv, out),
  },
  plugin: {
    summary: 'Add plugin packages to the instance, or list those the gateway discovers',
    usage: `Usage: portico plugin add <package...> [options]
       portico plugin list [options]

add: installs plugin packages (npm names or specs, .tgz tarballs, folders) into <instance>/plugins
with npm, leaving @portico/gateway-core to the gateway (plugins/.npmrc: legacy-peer-deps,
install-links), then checks each added package: a "portico" block, a core range that accepts the
running core, no copy of the core of its own. A package that fails is removed again, the folder
restored as it was (exit status 1); --force keeps it.

list: every plugin package the gateway would discover: its own dependencies, then
<instance>/plugins and admin.json's pluginDirectories. For each: name, version, types, and the
@portico/gateway-core range its package.json declares, checked against the running core. Nothing is
loaded unless --load: then each package is imported as the gateway would on first use (entry point,
manifest, core range, one core), and a refusal is printed as its coded error. Exit status 1 when a
package's range excludes the running core (or, with --load, a package would not load).

Options:
  --base DIR             instance directory (default: $PORTICO_BASE, else $HOME/.portico)
  --force                add: keep a package that fails a check
  --load                 list: import every package as the gateway would
  -h, --help             show this text`,
    run: async (argv, out) => (await import('./commands/plugin.ts')).pluginCommand(argv, out),
  },
  audit: {
    summary: 'Check CSV audit files (verify); print the JDBC audit table (schema)',
    usage: `Usage: portico audit verify [--keystore FILE --password PW] FILE...
       portico audit schema --database postgres|mysql|oracle|h2 [--table NAME]

verify checks CSV audit files written by CsvAuditEventHandler (or by the incumbents' CSV handler). A
tamper-evident file (HMAC and SIGNATURE columns) is checked against its HMAC chain, its signature
rows and the key chain in FILE.keystore, with the keystore that signed it: the first row altered,
removed, inserted or moved is named, and so is an end cut off. A plain file is checked for its form
(a header, rows of as many cells, a last row that ends). One line per file. Exit status: 0 when
every file is intact, 1 when one is not, 2 for a command line or keystore that cannot be used.

schema prints the statements that create the default auditaccess table of JdbcAuditEventHandler:
its columns, the primary key on id (which makes a retried batch add no duplicate), and the indexes
on response_status and userid. Exit status 0; 2 for a command line that cannot be used.

Options of verify:
  --keystore FILE        the JCEKS (or PKCS12) keystore of the handler's security settings
  --password PW          its password (default: $PORTICO_AUDIT_KEYSTORE_PASSWORD)
  --delimiter C          the files' delimiter (default ,)
  --quote C              the files' quote character (default ")
  --base DIR             instance directory, where plugins are found (default: $PORTICO_BASE,
                         else $HOME/.portico)
Options of schema:
  --database DB          postgres, mysql (MySQL and MariaDB), oracle or h2
  --table NAME           another name for the table (default auditaccess)
  -h, --help             show this text`,
    run: async (argv, out) =>
      argv[0] === 'schema'
        ? (await import('./commands/audit-schema.ts')).auditSchemaCommand(argv.slice(1), out)
        : (await import('./commands/audit.ts')).auditCommand(argv, out),
  },
  schema: {
    summary: 'Write the JSON Schemas of admin.json, config.json and route files',
    usage: `Usage: portico schema [options]

Writes the JSON Schemas of admin.json, config.json and route files, made from the settings of every
type the gateway finds for the instance: the core's, the plugins among its dependencies, those in
<instance>/plugins and in admin.json's pluginDirectories. Editors use them to check and complete
the files (a "$schema" key, or VS Code's json.schemas setting: see the README). A type no installed
plugin provides is accepted with any settings. Exit status 0; 2 for a command line that cannot be used.

Options:
  --base DIR             instance directory (default: $PORTICO_BASE, else $HOME/.portico)
  --out DIR              write admin.schema.json, config.schema.json and route.schema.json there
  --document NAME        without --out: print this one (admin, config or route; default route)
  -h, --help             show this text`,
    run: async (argv, out) => (await import('./commands/schema.ts')).schemaCommand(argv, out),
  },
  eval: {
    summary: 'Evaluate an expression or template and print the result as JSON',
    usage: `Usage: portico eval [options] <text>

Evaluates an expression or template the way a route would and prints the result as JSON.

Options:
  --bindings FILE.json   request, attributes, session, contexts ... as plain JSON (a file, or
                         the JSON object itself: --bindings '{"attributes": {"a": 1}}')
  --type string|boolean|integer|number|object   the type the setting expects
  -Dname=value           set a system property (repeatable)
  -h, --help             show this text`,
    run: async (argv, out) => (await import('./commands/eval.ts')).evalCommand(argv, out),
  },
};

const HELP = `Usage: portico <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(14)} ${command.summary}`)
  .join('\n')}
  help [command] Show this text, or the usage of a command

Run 'portico <command> --help' for the options of a command.
`;

/** True when the arguments ask for help (`-h`, `--help`) before any `--` separator. */
function asksForHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Runs one command; returns the process exit code (0 ok, 1 problems found, 2 usage or parse error). */
export async function main(argv: string[], out: Output = processOutput): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h') {
      out.stdout(HELP);
      return 0;
    }
    if (name === 'help') {
      const [topic] = rest;
      if (topic === undefined || topic === '--help' || topic === '-h') {
        out.stdout(HELP);
        return 0;
      }
      const command = Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
      if (command === undefined) throw new UsageError(`unknown command '${topic}'`);
      out.stdout(command.usage);
      return 0;
    }
    const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (command === undefined) throw new UsageError(`unknown command '${name}'`);
    if (asksForHelp(rest)) {
      out.stdout(command.usage);
      return 0;
    }
    return await command.run(rest, out);
  } catch (error) {
    if (error instanceof UsageError) {
      const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
      out.stderr(
        error.showUsage
          ? `${error.code}: ${error.message}\n\n${command?.usage ?? HELP}`
          : `${error.code}: ${error.message}`,
      );
      return 2;
    }
    throw error;
  }
}
