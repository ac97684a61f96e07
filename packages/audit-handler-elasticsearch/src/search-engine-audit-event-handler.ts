import { type BaseConnection, Client, errors } from '@elastic/elasticsearch';
import { Duration, defineHeaplet, type Handler, type Logger, s } from '@portico/gateway-core';
import {
  type AuditEvent,
  type AuditEventHandler,
  type AuditQuery,
  auditHandler,
  auditHandlerConfig,
  matchesQueryFilter,
} from '@portico/gateway-core/audit';
import { restoreEvent, type SearchDocument, toDocument } from './document.ts';
import { handlerConnection } from './handler-connection.ts';
import { toEngineQuery } from './query.ts';

/** The heap objects that, when declared, carry the handler's exchanges with the engine (either name). */
export const CLIENT_HANDLER_NAMES = ['SearchEngineClientHandler', 'ElasticsearchClientHandler'] as const;

/** The most hits one query asks the engine for (its default `index.max_result_window`). */
export const MAX_QUERY_SIZE = 10_000;

/** A name the engine accepts for an index (lower case; none of its reserved characters). */
const indexName = () =>
  s.string().refine((name) => {
    if (name.length === 0) return 'the index name is empty';
    if (name !== name.toLowerCase()) return `'${name}' has upper-case letters`;
    if (/[\\/*?"<>| ,#:]/.test(name)) return `'${name}' holds one of \\ / * ? " < > | , # : or a space`;
    if (/^[-_+]/.test(name)) return `'${name}' starts with -, _ or +`;
    if (name === '.' || name === '..') return `'${name}' is not an index name`;
    if (Buffer.byteLength(`${name}_access`) > 255) return `'${name}_access' is longer than 255 bytes`;
    return undefined;
  }, 'an index name: lower case, without \\ / * ? " < > | , # : or spaces, not starting with - _ +');

const CONNECTION = s
  .object({
    host: s
      .string()
      .refine((host) => (host.length > 0 ? undefined : 'the host is empty'), 'a host name or address')
      .default('localhost'),
    port: s.integer({ min: 0, max: 65535 }).default(9200),
    useSSL: s.boolean().default(false),
    username: s.string().optional(),
    password: s.string().optional(),
  })
  .refine(
    (connection) =>
      connection.password !== undefined && connection.username === undefined
        ? 'a password without a username'
        : undefined,
    'a username with the password (Basic authentication)',
    () => 'username',
  );

const INDEX_MAPPING = s.object({ indexName: indexName().default('audit') });

const BUFFERING = s.object({
  enabled: s.boolean().default(false),
  writeInterval: s
    .duration()
    .refine(
      (duration) =>
        duration.isZero
          ? 'the interval is zero'
          : duration.isUnlimited
            ? 'the interval is unlimited'
            : duration.toMillis() < 1
              ? 'the interval is under a millisecond'
              : undefined,
      'a duration greater than 0 (at least 1 millisecond), not unlimited',
    )
    .default(() => Duration.ofSeconds(1)),
  maxBatchedEvents: s.integer({ min: 1 }).default(500),
  maxSize: s.integer({ min: 1 }).default(10_000),
});

const SEARCH_ENGINE_HANDLER_CONFIG = auditHandlerConfig({
  connection: CONNECTION.optional(),
  indexMapping: INDEX_MAPPING.optional(),
  buffering: BUFFERING.optional(),
});

/** The handler's settings once read, defaults applied. */
export interface SearchEngineHandlerSettings {
  name: string;
  enabled: boolean;
  topics: readonly string[];
  connection: { host: string; port: number; useSSL: boolean; username?: string; password?: string };
  /** `indexMapping.indexName`: events of topic `access` go to the index `<indexName>_access`. */
  indexName: string;
  buffering: { enabled: boolean; writeInterval: number; maxBatchedEvents: number; maxSize: number };
}

/** What the handler did, for tests, benches and logs (the service counts events on its side). */
export interface SearchEngineCounters {
  /** Requests that wrote documents (`_doc` or `_bulk`). */
  requests: number;
  /** Requests that failed as a whole (the engine unreachable, or answering 429 or 5xx). */
  failedRequests: number;
  /** Documents the engine said it indexed (an event written again after a retry counts again). */
  indexed: number;
  /** Documents sent again after a write failed (the buffered handler's own retries). */
  retried: number;
  /** Documents the engine refused for good (a mapping conflict: 4xx other than 429): logged, not retried. */
  rejected: number;
  /** Events waiting in the buffer now (buffered handler). */
  buffered: number;
}

/** A write the engine refused, in whole or for some documents, that is worth trying again. */
export class SearchEngineWriteError extends Error {
  override readonly name = 'SearchEngineWriteError';
}

/**
 * SearchEngineAuditEventHandler (also ElasticsearchAuditEventHandler) indexes each audit event as
 * one document of the index `<indexName>_<topic>` of Elasticsearch (8 or 9), its `_id` the document
 * id: an event written twice (a batch retried after a failure) is one document.
 *
 * Unbuffered (the default), `publish` writes the batch the service gives it before resolving (one
 * `PUT <index>/_doc/<_id>` for a single event, one `_bulk` for more) and rejects when any document
 * failed for a reason worth retrying (unreachable, 429, 5xx), so that the service retries the batch.
 * Buffered, `publish` resolves once the events are in the handler's buffer (at most `maxSize`; past
 * it `publish` rejects and the service keeps them queued); the buffer is written by `_bulk`
 * requests of at most `maxBatchedEvents` every `writeInterval`, sooner when a full batch is
 * waiting, and kept (and tried again) when a write fails.
 */
export class SearchEngineAuditEventHandler {
  readonly settings: SearchEngineHandlerSettings;
  readonly counters: SearchEngineCounters = {
    requests: 0,
    failedRequests: 0,
    indexed: 0,
    retried: 0,
    rejected: 0,
    buffered: 0,
  };
  readonly client: Client;
  readonly #logger: Logger;
  #buffer: AuditEvent[] = [];
  #draining: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastFailure = 0;
  /** The last write of the buffer failed: only the timer (and flush) tries again. */
  #failing = false;
  #closed = false;

  constructor(settings: SearchEngineHandlerSettings, logger: Logger, through?: Handler) {
    this.settings = settings;
    this.#logger = logger;
    const { host, port, useSSL, username, password } = settings.connection;
    const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    this.client = new Client({
      node: `${useSSL ? 'https' : 'http'}://${hostPart}:${port}`,
      ...(username !== undefined ? { auth: { username, password: password ?? '' } } : {}),
      // The service (unbuffered) or the buffer (buffered) tries failed writes again, with backoff.
      maxRetries: 0,
      requestTimeout: 30_000,
      ...(through ? { Connection: handlerConnection(through) as typeof BaseConnection } : {}),
    });
  }

  /** The index of a topic's events. */
  index(topic: string): string {
    return `${this.settings.indexName}_${topic}`;
  }

  start(): void {
    if (!this.settings.buffering.enabled || this.#timer !== undefined || this.#closed) return;
    this.#timer = setInterval(() => {
      this.#drain().catch(() => {});
    }, this.settings.buffering.writeInterval);
    this.#timer.unref();
  }

  async publish(topic: string, events: readonly AuditEvent[]): Promise<void> {
    if (topic !== 'access' || events.length === 0) return;
    if (this.#closed) throw new SearchEngineWriteError('the handler is closed');
    if (!this.settings.buffering.enabled) return this.#write(topic, events);
    const { maxSize, maxBatchedEvents } = this.settings.buffering;
    if (this.#buffer.length + events.length > maxSize) {
      throw new SearchEngineWriteError(
        `the buffer holds ${this.#buffer.length} of at most ${maxSize} events: the batch waits`,
      );
    }
    this.start();
    for (const event of events) this.#buffer.push(event);
    this.counters.buffered = this.#buffer.length;
    // A full batch goes at once, unless the last write failed: then the timer tries again, once
    // per writeInterval, rather than every publish.
    if (this.#buffer.length >= maxBatchedEvents && this.#draining === undefined && !this.#failing)
      this.#drain().catch(() => {});
  }

  /** Writes what the buffer holds; rejects (keeping it) when a write fails. */
  async flush(): Promise<void> {
    try {
      await this.#drain();
      // A publish during the write may have added events after the batch that was being written.
      await this.#drain();
    } catch (error) {
      throw new SearchEngineWriteError(
        `${this.#buffer.length} buffered events could not be written: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /** Writes the buffer in batches of `maxBatchedEvents`, until it is empty or a write fails. */
  #drain(): Promise<void> {
    if (this.#draining !== undefined) return this.#draining;
    if (this.#buffer.length === 0) return Promise.resolve();
    const draining = this.#writeBuffer().finally(() => {
      if (this.#draining === draining) this.#draining = undefined;
    });
    this.#draining = draining;
    return draining;
  }

  async #writeBuffer(): Promise<void> {
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.slice(0, this.settings.buffering.maxBatchedEvents);
      try {
        await this.#write('access', batch);
      } catch (error) {
        this.counters.retried += batch.length;
        this.#failing = true;
        this.#noteFailure(error);
        throw error;
      }
      this.#failing = false;
      this.#buffer.splice(0, batch.length);
      this.counters.buffered = this.#buffer.length;
    }
  }

  #noteFailure(error: unknown): void {
    const now = Date.now();
    if (now - this.#lastFailure < 60_000) return;
    this.#lastFailure = now;
    this.#logger.warn(`audit handler '${this.settings.name}' could not write to the search engine; kept`, {
      handler: this.settings.name,
      buffered: this.#buffer.length,
      error: error instanceof Error ? error.message : String(error),
    });
  }

  /** Writes events, each its own document by its `_id`; rejects when any is worth trying again. */
  async #write(topic: string, events: readonly AuditEvent[]): Promise<void> {
    const index = this.index(topic);
    this.counters.requests++;
    try {
      if (events.length === 1) {
        const event = events[0]!;
        await this.client.index({ index, id: event._id, document: toDocument(event) });
        this.counters.indexed++;
        return;
      }
      const operations: unknown[] = [];
      for (const event of events)
        operations.push({ index: { _index: index, _id: event._id } }, toDocument(event));
      const answer = await this.client.bulk({ operations });
      let again = 0;
      let firstError = '';
      for (const item of answer.items) {
        const result = item.index ?? item.create;
        const status = result?.status ?? 500;
        if (status < 300) this.counters.indexed++;
        else if (status === 429 || status >= 500) {
          again++;
          firstError ||= `${status} ${result?.error?.reason ?? ''}`;
        } else this.#rejected(result?._id ?? undefined, status, result?.error?.reason ?? undefined);
      }
      if (again > 0)
        throw new SearchEngineWriteError(`${again} of ${events.length} documents not indexed: ${firstError}`);
    } catch (error) {
      if (error instanceof errors.ResponseError && error.statusCode !== undefined) {
        const status = error.statusCode;
        if (events.length === 1 && status >= 400 && status < 500 && status !== 429) {
          // A document the engine will never take: retrying it would stop every event behind it.
          this.#rejected(events[0]!._id, status, error.message);
          return;
        }
      }
      this.counters.failedRequests++;
      throw error;
    }
  }

  #rejected(id: string | undefined, status: number, reason: string | undefined): void {
    this.counters.rejected++;
    this.#logger.error(`the search engine refused audit event ${id ?? ''}: ${status} ${reason ?? ''}`, {
      handler: this.settings.name,
      _id: id,
      status,
    });
  }

  async query(topic: string, query: AuditQuery): Promise<readonly AuditEvent[]> {
    if (topic !== 'access') return [];
    await this.flush().catch(() => {});
    const index = this.index(topic);
    try {
      await this.client.indices.refresh({ index, ignore_unavailable: true });
      const size = Math.max(0, Math.min(query.limit, MAX_QUERY_SIZE));
      const answer = await this.client.search<SearchDocument>({
        index,
        ignore_unavailable: true,
        allow_no_indices: true,
        size,
        query: toEngineQuery(query.filter),
        sort: [{ timestamp: { order: 'asc', unmapped_type: 'date' } }],
      });
      return answer.hits.hits
        .map((hit) => restoreEvent(hit._id!, hit._source ?? {}))
        .filter((event) => matchesQueryFilter(query.filter, event));
    } catch (error) {
      if (error instanceof errors.ResponseError && error.statusCode === 404) return [];
      throw error;
    }
  }

  async read(topic: string, id: string): Promise<AuditEvent | undefined> {
    if (topic !== 'access') return undefined;
    if (this.#buffer.some((event) => event._id === id)) await this.flush().catch(() => {});
    try {
      const found = await this.client.get<SearchDocument>({ index: this.index(topic), id });
      return found.found ? restoreEvent(found._id, found._source ?? {}) : undefined;
    } catch (error) {
      if (error instanceof errors.ResponseError && error.statusCode === 404) return undefined;
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      await this.flush();
    } catch (error) {
      this.#logger.error(
        `audit handler '${this.settings.name}' was closed with ${this.#buffer.length} events unwritten`,
        { handler: this.settings.name, dropped: this.#buffer.length, error: String(error) },
      );
    }
    this.#closed = true;
    this.#logger.info(`audit handler '${this.settings.name}' closed`, {
      handler: this.settings.name,
      ...this.counters,
    });
    await this.client.close();
  }
}

export const SearchEngineAuditEventHandlerHeaplet = defineHeaplet({
  type: 'SearchEngineAuditEventHandler',
  aliases: ['ElasticsearchAuditEventHandler'],
  kind: 'audit-handler',
  config: SEARCH_ENGINE_HANDLER_CONFIG,
  create: async ({ config, heap, logger, onDestroy }) => {
    const settings: SearchEngineHandlerSettings = {
      name: config.name,
      enabled: config.enabled,
      topics: config.topics,
      connection: {
        host: config.connection?.host ?? 'localhost',
        port: config.connection?.port ?? 9200,
        useSSL: config.connection?.useSSL ?? false,
        ...(config.connection?.username !== undefined ? { username: config.connection.username } : {}),
        ...(config.connection?.password !== undefined ? { password: config.connection.password } : {}),
      },
      indexName: config.indexMapping?.indexName ?? 'audit',
      buffering: {
        enabled: config.buffering?.enabled ?? false,
        writeInterval: config.buffering?.writeInterval.toMillis() ?? 1000,
        maxBatchedEvents: config.buffering?.maxBatchedEvents ?? 500,
        maxSize: config.buffering?.maxSize ?? 10_000,
      },
    };
    const clientName = CLIENT_HANDLER_NAMES.find((name) => heap.has(name));
    const through = clientName === undefined ? undefined : await heap.get<Handler>(clientName, 'handler');
    const writer = new SearchEngineAuditEventHandler(settings, logger, through);
    const handler: AuditEventHandler = auditHandler({
      name: settings.name,
      topics: settings.topics,
      enabled: settings.enabled,
      start: () => {
        if (settings.enabled) writer.start();
      },
      publish: (topic, events) => writer.publish(topic, events),
      flush: () => writer.flush(),
      close: () => writer.close(),
      query: (topic, query) => writer.query(topic, query),
      read: (topic, id) => writer.read(topic, id),
    });
    HANDLERS.set(handler, writer);
    onDestroy(() => handler.close());
    return handler;
  },
});

const HANDLERS = new WeakMap<AuditEventHandler, SearchEngineAuditEventHandler>();

/** The search engine handler behind an audit handler the heaplet made (its settings, counters, client). */
export function searchEngineHandlerOf(handler: AuditEventHandler): SearchEngineAuditEventHandler | undefined {
  return HANDLERS.get(handler);
}
