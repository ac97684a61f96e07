import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import { waitFor } from '@portico/test-support';
import { describe, expect, it } from 'vitest';
import { AccessLog, type AccessRecord } from './access-log.ts';

const record: AccessRecord = {
  client: '127.0.0.1',
  method: 'GET',
  path: `/${'p'.repeat(200)}`,
  status: 200,
  bytes: 100,
  duration: 1.25,
  route: 'r',
  transactionId: 'tx',
};

describe('AccessLog', () => {
  it('drops lines, counted and logged once, when more waits to be written than its bound (a file that cannot keep up)', {
    timeout: 20_000,
  }, async () => {
    // A named pipe nobody reads: the writes block once its buffer is full, as on a stalled disk.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-access-log-'));
    const fifo = path.join(dir, 'access.log');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const logger = createMemoryLogger();
    const log = new AccessLog({ enabled: true, file: fifo }, dir, {
      file: undefined,
      logger,
      maxWaiting: 512 * 1024,
    });
    try {
      // About 3 MB of lines: the pipe takes 64 KB, the bound 512 KB, the rest is dropped.
      for (let i = 0; i < 10_000; i++) log.write(record);
      await waitFor('a drop', () => (log.dropped > 0 ? true : undefined));
      expect(log.dropped).toBeGreaterThan(5_000);
      expect(log.dropped).toBeLessThan(10_000);
      const warnings = logger.records.filter((r) => r.message.startsWith('access log lines dropped'));
      expect(warnings).toHaveLength(1);
    } finally {
      // Read the pipe while the log closes, so that its writes land and it can close the file.
      let closed = false;
      const closing = log.close(logger).then(() => {
        closed = true;
      });
      const chunk = Buffer.alloc(65536);
      const deadline = Date.now() + 8000;
      while (!closed && Date.now() < deadline) {
        try {
          readSync(reader, chunk);
        } catch {
          // Nothing to read yet (EAGAIN).
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      closeSync(reader);
      await closing;
    }
  });
});
