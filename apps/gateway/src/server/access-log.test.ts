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
  it('drops lines, counted and logged once, when more waits to be written than its bound (a file that cannot keep up)', async () => {
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
      // Drain the pipe so the blocked write returns, then let go of it.
      const chunk = Buffer.alloc(65536);
      const drained = Date.now() + 2000;
      while (Date.now() < drained) {
        try {
          if (readSync(reader, chunk) === 0) break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      log.close(logger);
      closeSync(reader);
    }
  });
});
