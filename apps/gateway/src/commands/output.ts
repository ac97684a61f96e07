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

/** A malformed command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  readonly code = ErrorCode.USAGE;
}
