import { lookup } from 'node:dns/promises';
import os from 'node:os';
import { defineHeaplet, ErrorCode, PorticoError, s } from '@portico/gateway-core';
import {
  ACCESS_TOPIC_SCHEMA,
  type AuditEvent,
  auditHandler,
  auditHandlerConfig,
  evaluable,
  type JsonSchema,
} from '@portico/gateway-core/audit';
import {
  FACILITIES,
  type Facility,
  headerValue,
  SEVERITIES,
  type Severity,
  SyslogFormatter,
} from './format.ts';
import { TcpTransport, type Transport, type TransportCounters, UdpTransport } from './transport.ts';

/** The product the header's APP-NAME and the SD-ID name. */
export const APP_NAME = 'Portico';

const SEVERITY_MAPPING = s.object({
  topic: s.string(),
  /** A JSON pointer, with or without its leading slash. */
  field: s.string(),
  valueMappings: evaluable(s.map(s.enumOf(SEVERITIES))),
});

const BUFFERING = s.object({
  enabled: s.boolean().default(false),
  maxSize: s.integer({ min: 1 }).default(5000),
});

const SYSLOG_HANDLER_CONFIG = auditHandlerConfig({
  protocol: s.enumOf(['TCP', 'UDP'] as const),
  host: s.string(),
  port: s.integer({ min: 0, max: 65535 }),
  connectTimeout: s.integer({ min: 1 }).optional(),
  facility: s.enumOf(FACILITIES),
  buffering: BUFFERING.optional(),
  severityFieldMappings: s.array(SEVERITY_MAPPING).default([]),
}).refine(
  (config) =>
    config.protocol === 'TCP' && config.connectTimeout === undefined
      ? 'the setting is required with the TCP protocol'
      : undefined,
  'connectTimeout in milliseconds, with the TCP protocol',
  (config) =>
    config.protocol === 'TCP' && config.connectTimeout === undefined ? 'connectTimeout' : undefined,
);

/** One `severityFieldMappings` entry once read. */
export interface SeverityMapping {
  readonly topic: string;
  /** The field's path, its keys in order. */
  readonly path: readonly string[];
  readonly values: ReadonlyMap<string, Severity>;
}

/** The handler's settings once read, defaults applied and the host resolved. */
export interface SyslogHandlerSettings {
  readonly name: string;
  readonly enabled: boolean;
  readonly topics: readonly string[];
  readonly protocol: 'TCP' | 'UDP';
  readonly host: string;
  /** The address `host` resolved to when the configuration loaded. */
  readonly address: string;
  readonly port: number;
  /** Milliseconds; with TCP only. */
  readonly connectTimeout: number | undefined;
  readonly facility: Facility;
  readonly buffering: { readonly enabled: boolean; readonly maxSize: number };
  readonly severityMappings: readonly SeverityMapping[];
}

/** What a handler did: its transport's counters and its buffer. */
export interface SyslogCounters extends TransportCounters {
  /** Events waiting in the buffer (buffering enabled). */
  buffered: number;
  /** Batches refused because the buffer had no room: the service publishes them again later. */
  bufferFull: number;
}

/** The wait before a buffered handler tries the daemon again, doubling up to the last. */
const BACKOFF_MS = [100, 200, 500, 1000, 2000, 5000];
/** The most messages a buffered handler sends in one write. */
const CHUNK = 1000;

/**
 * SyslogAuditEventHandler writes each audit event as one RFC 5424 message to a syslog daemon, over
 * TCP (octet-counting framing) or UDP, laid out as the incumbents' messages are (`format.ts`).
 *
 * Unbuffered (the default), `publish` resolves once the batch's messages are handed to the network
 * and rejects when the connection fails, so the service publishes the batch again once the daemon is
 * back. Buffered, `publish` resolves once the messages are in the handler's buffer (at most
 * `buffering.maxSize` events; a batch that does not fit is refused, and the service keeps it), and a
 * writer sends them, trying again with backoff while the daemon is away; `flush` and `close` wait
 * for it.
 */
export class SyslogAuditEventHandler {
  readonly settings: SyslogHandlerSettings;
  readonly #transport: Transport;
  readonly #formatter: SyslogFormatter;
  /** Buffered messages, oldest first, from `#head` on (compacted now and then). */
  #buffer: string[] = [];
  #head = 0;
  #bufferFull = 0;
  #writing: Promise<void> | undefined;
  #lastError: unknown;

  constructor(settings: SyslogHandlerSettings, transport?: Transport) {
    this.settings = settings;
    this.#transport =
      transport ??
      (settings.protocol === 'TCP'
        ? new TcpTransport(settings.address, settings.port, settings.connectTimeout ?? 30_000)
        : new UdpTransport(settings.address, settings.port));
    this.#formatter = new SyslogFormatter({
      facility: settings.facility,
      hostname: headerValue(os.hostname(), 255),
      appName: APP_NAME,
      procId: String(process.pid),
    });
    for (const topic of settings.topics) this.#formatter.setSchema(topic, ACCESS_TOPIC_SCHEMA);
  }

  get counters(): SyslogCounters {
    return { ...this.#transport.counters, buffered: this.#buffered(), bufferFull: this.#bufferFull };
  }

  /** Lays out each topic's parameters from its schema, extensions included. */
  start(topics: ReadonlyMap<string, JsonSchema>): void {
    for (const [topic, schema] of topics) this.#formatter.setSchema(topic, schema);
  }

  /** The message an event becomes: what `publish` writes. */
  format(topic: string, event: AuditEvent): string {
    return this.#formatter.format(topic, event, this.severityOf(topic, event));
  }

  /**
   * The event's severity: that which the first mapping of its topic whose field the event has maps
   * the field's value to, else `informational`.
   */
  severityOf(topic: string, event: AuditEvent): Severity {
    for (const mapping of this.settings.severityMappings) {
      if (mapping.topic !== topic) continue;
      let value: unknown = event;
      for (const key of mapping.path) {
        if (typeof value !== 'object' || value === null) {
          value = undefined;
          break;
        }
        value = (value as Record<string, unknown>)[key];
      }
      if (value === undefined || value === null) continue;
      const severity = mapping.values.get(typeof value === 'string' ? value : JSON.stringify(value));
      if (severity !== undefined) return severity;
    }
    return 'informational';
  }

  async publish(topic: string, events: readonly AuditEvent[]): Promise<void> {
    const fields = this.#formatter.fieldsOf(topic);
    const messages = events.map((event) =>
      this.#formatter.format(topic, event, this.severityOf(topic, event), fields),
    );
    if (!this.settings.buffering.enabled) {
      await this.#transport.send(messages);
      return;
    }
    if (this.#buffered() + messages.length > this.settings.buffering.maxSize) {
      this.#bufferFull++;
      throw new Error(
        `the syslog buffer holds ${this.#buffered()} of at most ${this.settings.buffering.maxSize} events: ${messages.length} more do not fit`,
      );
    }
    for (const message of messages) this.#buffer.push(message);
    this.#write();
  }

  /** Resolves once the buffer is written (or the handler gave up, closing). */
  async flush(): Promise<void> {
    while (this.#writing !== undefined) await this.#writing;
  }

  /** Writes what the buffer holds (for at most `timeoutMs`), then lets go of the connection. */
  async close(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.#deadline = deadline;
    await this.flush();
    await this.#transport.close();
  }

  #deadline = Number.POSITIVE_INFINITY;

  #buffered(): number {
    return this.#buffer.length - this.#head;
  }

  #write(): void {
    this.#writing ??= this.#drain().finally(() => {
      this.#writing = undefined;
    });
  }

  async #drain(): Promise<void> {
    let failures = 0;
    while (this.#buffered() > 0) {
      const chunk = this.#buffer.slice(this.#head, this.#head + CHUNK);
      try {
        await this.#transport.send(chunk);
        this.#head += chunk.length;
        if (this.#head === this.#buffer.length || this.#head > 10_000) {
          this.#buffer = this.#buffer.slice(this.#head);
          this.#head = 0;
        }
        failures = 0;
      } catch (error) {
        this.#lastError = error;
        const wait = BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)]!;
        if (Date.now() + wait > this.#deadline) return;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** The last error the buffered writer met, for its log. */
  get lastError(): unknown {
    return this.#lastError;
  }
}

/** Reads `severityFieldMappings[i].field`: a JSON pointer, its leading slash optional. */
function pointerPath(pointer: string): string[] {
  const body = pointer.startsWith('/') ? pointer.slice(1) : pointer;
  return body
    .split('/')
    .filter((key) => key !== '')
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const handlers = new WeakMap<object, SyslogAuditEventHandler>();

/** The handler object behind an audit handler this package made (tests, the bench). */
export function syslogHandlerOf(handler: object): SyslogAuditEventHandler | undefined {
  return handlers.get(handler);
}

export const SyslogAuditEventHandlerHeaplet = defineHeaplet({
  type: 'SyslogAuditEventHandler',
  kind: 'audit-handler',
  config: SYSLOG_HANDLER_CONFIG,
  create: async ({ config, configAt, logger, onDestroy }) => {
    let address: string;
    try {
      address = (await lookup(config.host)).address;
    } catch (error) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `the syslog host '${config.host}' does not resolve to an IP address: ${(error as Error).message}`,
        { ...configAt('host'), expected: 'a host name that resolves to an IP address' },
      );
    }
    const settings: SyslogHandlerSettings = {
      name: config.name,
      enabled: config.enabled,
      topics: config.topics,
      protocol: config.protocol,
      host: config.host,
      address,
      port: config.port,
      connectTimeout: config.protocol === 'TCP' ? config.connectTimeout : undefined,
      facility: config.facility,
      buffering: {
        enabled: config.buffering?.enabled ?? false,
        maxSize: config.buffering?.maxSize ?? 5000,
      },
      severityMappings: config.severityFieldMappings.map((mapping) => ({
        topic: mapping.topic,
        path: pointerPath(mapping.field),
        values: new Map(Object.entries(mapping.valueMappings)),
      })),
    };
    const writer = new SyslogAuditEventHandler(settings);
    const handler = auditHandler({
      name: settings.name,
      topics: settings.topics,
      enabled: settings.enabled,
      start: (topics) => writer.start(topics),
      publish: (topic, events) => writer.publish(topic, events),
      flush: () => writer.flush(),
      close: async () => {
        await writer.close();
        if (writer.counters.buffered > 0)
          logger.warn(
            `syslog handler '${settings.name}' closed with ${writer.counters.buffered} events unsent`,
            {
              handler: settings.name,
              error: String(writer.lastError),
            },
          );
      },
    });
    handlers.set(handler, writer);
    // Released when its heap goes, if its service has not closed it already (close runs once).
    onDestroy(() => handler.close());
    return handler;
  },
});
