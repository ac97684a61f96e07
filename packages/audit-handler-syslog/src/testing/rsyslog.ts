import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { serviceSetting, serviceUrl } from '@portico/test-support';

/**
 * The real rsyslog of test-e2e/services (`PORTICO_SYSLOG_HOST`, `_PORT`, `_FILE`, from the
 * environment or the services' env.json), or undefined: the suite is then skipped, and under CI it
 * fails.
 */
export async function realRsyslog(): Promise<{ host: string; port: number; file: string } | undefined> {
  const host = serviceSetting('PORTICO_SYSLOG_HOST');
  const port = serviceSetting('PORTICO_SYSLOG_PORT');
  const file = serviceSetting('PORTICO_SYSLOG_FILE');
  process.env.PORTICO_SYSLOG_TCP_URL ??= host && port && file ? `tcp://${host}:${port}` : '';
  const url = await serviceUrl('PORTICO_SYSLOG_TCP_URL', 'rsyslog');
  return url === undefined ? undefined : { host: host!, port: Number(port), file: file! };
}

/** Reads what a file gained since it was opened here: the daemon's file is shared by other tests. */
export function tail(file: string) {
  let offset = existsSync(file) ? statSync(file).size : 0;
  let partial = '';
  return {
    /** The complete lines written since the last call. */
    lines(): string[] {
      const size = statSync(file).size;
      if (size <= offset) return [];
      const buffer = Buffer.alloc(size - offset);
      const fd = openSync(file, 'r');
      try {
        readSync(fd, buffer, 0, buffer.length, offset);
      } finally {
        closeSync(fd);
      }
      offset = size;
      const text = partial + buffer.toString('utf8');
      const lines = text.split('\n');
      partial = lines.pop()!;
      return lines;
    },
  };
}
