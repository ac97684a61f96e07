/** A protobuf reader for the tests of the OTLP protobuf writer and of the traces the server exports. */

/**
 * What each length-delimited field of the messages read here holds: a message (its fields' kinds),
 * or `string` / `bytes`. Fields of other wire types are read as numbers.
 */
export type Kinds = { readonly [field: number]: Kinds | 'string' | 'bytes' };
const KEY_VALUE: Kinds = { 1: 'string', 2: { 1: 'string' } };
export const REQUEST: Kinds = {
  1: {
    1: { 1: KEY_VALUE },
    2: {
      1: { 1: 'string', 2: 'string', 3: KEY_VALUE },
      2: { 1: 'bytes', 2: 'bytes', 3: 'string', 4: 'bytes', 5: 'string', 9: KEY_VALUE, 15: { 2: 'string' } },
    },
  },
};

export type Decoded = { [field: number]: unknown[] };

/**
 * A protobuf message read by the kinds above, its fields at their default (0, empty, an empty
 * message) left out as a reader sees them: the two writers may write or leave out a default.
 */
export function decode(bytes: Uint8Array, kinds: Kinds): Decoded {
  const fields: Decoded = {};
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const tag = Number(varint());
    const number = tag >> 3;
    let value: unknown;
    switch (tag & 7) {
      case 0:
        value = varint();
        break;
      case 1:
        value = view.getBigUint64(at, true);
        at += 8;
        break;
      case 5:
        value = view.getUint32(at, true);
        at += 4;
        break;
      case 2: {
        const length = Number(varint());
        const content = bytes.subarray(at, at + length);
        at += length;
        const kind = kinds[number];
        if (kind === 'string') value = Buffer.from(content).toString('utf8');
        else if (kind === 'bytes') value = Buffer.from(content).toString('hex');
        else if (kind === undefined) throw new Error(`field ${number} is not known here`);
        else value = decode(content, kind);
        break;
      }
      default:
        throw new Error(`wire type ${tag & 7}`);
    }
    const isDefault =
      value === 0n ||
      value === 0 ||
      value === '' ||
      (typeof value === 'object' && Object.keys(value!).length === 0);
    if (!isDefault) (fields[number] ??= []).push(value);
  }
  return fields;
}

/** An exported span as the OTLP JSON mapping writes it, read back from protobuf (the tests' one shape). */
export interface JsonLikeSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: number } }[];
  status?: { code?: number };
  service: string;
}

/** The spans of a protobuf `ExportTraceServiceRequest`, in the JSON mapping's shape. */
export function spansOfRequest(body: Uint8Array): JsonLikeSpan[] {
  const spans: JsonLikeSpan[] = [];
  const attributesOf = (entries: unknown[] | undefined) =>
    ((entries ?? []) as Decoded[]).map((entry) => {
      const value = (entry[2]?.[0] ?? {}) as Decoded;
      const text = value[1]?.[0] as string | undefined;
      const integer = value[3]?.[0] as bigint | undefined;
      return {
        key: entry[1]![0] as string,
        value: text !== undefined ? { stringValue: text } : { intValue: Number(integer ?? 0n) },
      };
    });
  for (const resourceSpans of (decode(body, REQUEST)[1] ?? []) as Decoded[]) {
    const resource = (resourceSpans[1]?.[0] ?? {}) as Decoded;
    const service = attributesOf(resource[1]).find((entry) => entry.key === 'service.name')?.value
      .stringValue;
    for (const scopeSpans of (resourceSpans[2] ?? []) as Decoded[])
      for (const span of (scopeSpans[2] ?? []) as Decoded[]) {
        const status = span[15]?.[0] as Decoded | undefined;
        spans.push({
          traceId: span[1]![0] as string,
          spanId: span[2]![0] as string,
          ...(span[4] ? { parentSpanId: span[4][0] as string } : {}),
          name: (span[5]?.[0] as string | undefined) ?? '',
          kind: Number((span[6]?.[0] as bigint | undefined) ?? 0n),
          attributes: attributesOf(span[9]),
          status: status?.[3] ? { code: Number(status[3][0] as bigint) } : {},
          service: String(service),
        });
      }
  }
  return spans;
}
