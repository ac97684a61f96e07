import { type AuditEvent, type JsonSchema, topicFields } from '@portico/gateway-core/audit';

/** The facilities a handler may write to, by their configuration names, each at its RFC 5424 code. */
export const FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'logaudit',
  'logalert',
  'clockd',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;
export type Facility = (typeof FACILITIES)[number];

/** The eight severities, each at its RFC 5424 code (its index). */
export const SEVERITIES = [
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'informational',
  'debug',
] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The private enterprise number the structured-data ID carries, as the incumbents' SD-IDs do. */
export const ENTERPRISE_NUMBER = 36733;

/** What is the same in every message a handler writes. */
export interface MessageHeader {
  readonly facility: Facility;
  readonly hostname: string;
  readonly appName: string;
  readonly procId: string;
}

/** `\`, `"` and `]` escaped with a backslash, as RFC 5424 asks of a PARAM-VALUE. */
export function escapeParamValue(value: string): string {
  return value.replace(/[\\"\]]/g, (c) => `\\${c}`);
}

/** A header field: printable US-ASCII without spaces, `-` when empty (RFC 5424 NILVALUE). */
function headerField(value: string | undefined, max: number): string {
  if (value === undefined || value === '') return '-';
  const clean = value.replace(/[^\x21-\x7e]/g, '_');
  return clean.length > max ? clean.slice(0, max) : clean;
}

/** A field's value as a PARAM-VALUE: text as it is, objects and arrays as JSON. */
function paramText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The leaf at a dot-notation field, or undefined. */
function at(event: AuditEvent, field: string): unknown {
  let node: unknown = event;
  for (const key of field.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

const HEADER_FIELDS = new Set(['_id', 'timestamp', 'eventName']);

/**
 * Formats one topic's events: the structured-data parameters are the topic schema's fields (its
 * leaves in dot notation, in declaration order) less `_id`, `timestamp` and `eventName`, which the
 * header carries; a field the event lacks is left out.
 */
export class SyslogFormatter {
  readonly #header: MessageHeader;
  readonly #fields = new Map<string, readonly string[]>();

  constructor(header: MessageHeader) {
    this.#header = header;
  }

  /** Lays out a topic's parameters from its schema. */
  setSchema(topic: string, schema: JsonSchema): void {
    this.#fields.set(
      topic,
      topicFields(schema).filter((field) => !HEADER_FIELDS.has(field)),
    );
  }

  /**
   * One RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD-ID params] `, the
   * MSG empty, PRI = facility × 8 + severity, MSGID the event's `eventName`, SD-ID
   * `<topic>.<app name>@36733`.
   */
  format(topic: string, event: AuditEvent, severity: Severity, fields = this.fieldsOf(topic)): string {
    const h = this.#header;
    const pri = FACILITIES.indexOf(h.facility) * 8 + SEVERITIES.indexOf(severity);
    let sd = `[${topic}.${h.appName}@${ENTERPRISE_NUMBER}`;
    for (const field of fields) {
      const value = at(event, field);
      if (value === undefined || value === null) continue;
      sd += ` ${field}="${escapeParamValue(paramText(value))}"`;
    }
    sd += ']';
    return `<${pri}>1 ${headerField(event.timestamp, 64)} ${h.hostname} ${h.appName} ${h.procId} ${headerField(
      typeof event.eventName === 'string' ? event.eventName : undefined,
      32,
    )} ${sd} `;
  }

  fieldsOf(topic: string): readonly string[] {
    return this.#fields.get(topic) ?? [];
  }
}

/** A header's HOSTNAME or APP-NAME, made a valid header field. */
export function headerValue(value: string, max: number): string {
  return headerField(value, max);
}
