import { s } from '../config/schema.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { TemporaryStorage } from '../http/temporary-storage.ts';
import type { Logger } from '../logging.ts';

/**
 * The default `LogSink`: the gateway's own logger. The log sink objects with levels and files arrive
 * with the decorators; until then this one accepts the incumbents' ConsoleLogSink settings.
 */
export const ConsoleLogSinkHeaplet = defineHeaplet({
  type: 'ConsoleLogSink',
  kind: 'object',
  config: s.object({
    level: s
      .enumOf(['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARNING', 'WARN', 'ERROR', 'ALL', 'OFF'] as const)
      .default('INFO'),
    stream: s.enumOf(['ERR', 'OUT', 'AUTO'] as const).default('AUTO'),
  }),
  create: ({ logger }): Logger => logger,
});

/** Where buffered bodies go; the settings the incumbents accept, used by the entity buffering. */
export const TemporaryStorageHeaplet = defineHeaplet({
  type: 'TemporaryStorage',
  kind: 'object',
  config: s.object({
    initialLength: s.integer({ min: 0 }).default(8 * 1024),
    memoryLimit: s.integer({ min: 0 }).default(64 * 1024),
    fileLimit: s.integer({ min: 0 }).default(1024 * 1024 * 1024),
    directory: s.string().optional(),
  }),
  create: ({ config, environment }) =>
    new TemporaryStorage({
      memoryLimit: config.memoryLimit,
      fileLimit: config.fileLimit,
      directory: config.directory ?? environment.temporaryDirectory,
    }),
});
