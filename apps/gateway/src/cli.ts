import { evalCommand } from './commands/eval.ts';
import { type Output, processOutput, UsageError } from './commands/output.ts';
import { startCommand } from './commands/start.ts';
import { validateCommand } from './commands/validate.ts';

const HELP = `Usage: portico <command> [options]

Commands:
  start          Serve the configuration of the instance directory (or the embedded quickstart)
                 --base DIR             instance directory (default: $PORTICO_BASE, $HOME/.portico)
                 --port N, --host H     listen there instead of admin.json's connectors
                 --workers N            processes (default: one per core; 1 for a single process)
                 --log-format json|pretty
                 -Dname=value           set a system property (repeatable)
  validate       Load everything without serving; print every problem and warning; exit 1 on a problem
                 --base DIR
                 --strict               warnings fail too (exit 1)
  eval <text>    Evaluate an expression or template and print the result as JSON
                 --bindings FILE.json   request, attributes, session, contexts ... as plain JSON
                 --type string|boolean|integer|number|object   the type the setting expects
                 -Dname=value           set a system property (repeatable)
  help           Show this text
`;

/** Runs one command; returns the process exit code (0 ok, 1 problems found, 2 usage or parse error). */
export async function main(argv: string[], out: Output = processOutput): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'eval':
        return await evalCommand(rest, out);
      case 'start':
        return await startCommand(rest, out);
      case 'validate':
        return await validateCommand(rest, out);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        out.stdout(HELP);
        return 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      out.stderr(`${error.code}: ${error.message}\n\n${HELP}`);
      return 2;
    }
    throw error;
  }
}
