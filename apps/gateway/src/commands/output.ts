import { ErrorCode } from '@portico/gateway-core';

/** Where a command writes; tests capture it instead of the process streams. */
export interface Output {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const processOutput: Output = {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
};

/**
 * A malformed command line: exit code 2, printed with the usage text of the command, unless the
 * fault is in what an option names (a --bindings file that is not JSON): then the one line says
 * all there is to say.
 */
export class UsageError extends Error {
  readonly code = ErrorCode.USAGE;
  /** Whether the usage text of the command is printed after the message. */
  readonly showUsage: boolean;

  constructor(message: string, options: { usage?: boolean } = {}) {
    super(message);
    this.showUsage = options.usage ?? true;
  }
}
