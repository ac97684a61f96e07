import { ByteReader } from './byte-reader.ts';
import { KeystoreFormatError } from './der.ts';

/**
 * A reader for the Java serialization stream that JCEKS keystores store secret keys in (a
 * `SealedObject` holding a serialized `SecretKeySpec` or `KeyRep`). It reads objects, strings,
 * arrays, enums and class descriptors with their field values; what those classes write beyond their
 * fields (annotations) is skipped. Externalizable classes and proxies are refused.
 */

/** A deserialized object: its class name and its fields, those of its superclasses included. */
export interface JavaObject {
  className: string;
  fields: Map<string, JavaValue>;
}

export type JavaValue =
  | null
  | number
  | bigint
  | boolean
  | string
  | Uint8Array
  | JavaValue[]
  | JavaObject
  | { enumConstant: string };

interface ClassDesc {
  name: string;
  flags: number;
  fields: { type: string; name: string }[];
  superClass: ClassDesc | null;
}

/** The stream's first two bytes; the version (5) follows. */
export const STREAM_MAGIC = 0xaced;
/** The type codes of the stream's elements. */
export const TC = {
  NULL: 0x70,
  REFERENCE: 0x71,
  CLASSDESC: 0x72,
  OBJECT: 0x73,
  STRING: 0x74,
  ARRAY: 0x75,
  BLOCKDATA: 0x77,
  ENDBLOCKDATA: 0x78,
  BLOCKDATALONG: 0x7a,
  LONGSTRING: 0x7c,
  PROXYCLASSDESC: 0x7d,
  ENUM: 0x7e,
} as const;
const SC_WRITE_METHOD = 0x01;
export const SC_SERIALIZABLE = 0x02;
/** The first handle a stream assigns; back-references count from it. */
export const BASE_HANDLE = 0x7e0000;

/** Reads the first object of a serialization stream starting at `offset`; gives it and where the stream ended. */
export function readJavaObject(bytes: Uint8Array, offset = 0): { value: JavaValue; end: number } {
  const reader = new StreamReader(bytes, offset);
  if (reader.u16() !== STREAM_MAGIC || reader.u16() !== 5) {
    throw new KeystoreFormatError('not a Java serialization stream');
  }
  const value = reader.content();
  return { value, end: reader.offset };
}

class StreamReader extends ByteReader {
  readonly #handles: unknown[] = [];

  content(): JavaValue {
    const tag = this.u8();
    switch (tag) {
      case TC.NULL:
        return null;
      case TC.REFERENCE:
        return this.#handle() as JavaValue;
      case TC.STRING:
        return this.#newHandle(this.utf(this.u16()));
      case TC.LONGSTRING:
        return this.#newHandle(this.utf(Number(this.view.getBigUint64(this.advance(8)))));
      case TC.ARRAY:
        return this.#array();
      case TC.OBJECT:
        return this.#object();
      case TC.ENUM: {
        this.#classDesc();
        const slot = this.#handles.push(null) - 1;
        const name = this.content();
        const constant = { enumConstant: String(name) };
        this.#handles[slot] = constant;
        return constant;
      }
      case TC.CLASSDESC:
        this.offset--;
        this.#classDesc();
        return null;
      default:
        throw new KeystoreFormatError(`unsupported Java serialization element 0x${tag.toString(16)}`);
    }
  }

  #object(): JavaObject {
    const desc = this.#classDesc();
    if (!desc) throw new KeystoreFormatError('a serialized object without a class');
    const object: JavaObject = { className: desc.name, fields: new Map() };
    this.#handles.push(object);
    const chain: ClassDesc[] = [];
    for (let d: ClassDesc | null = desc; d; d = d.superClass) chain.unshift(d);
    for (const d of chain) {
      if (!(d.flags & SC_SERIALIZABLE))
        throw new KeystoreFormatError(`${d.name} is not read (externalizable)`);
      for (const field of d.fields) object.fields.set(field.name, this.#value(field.type));
      if (d.flags & SC_WRITE_METHOD) this.#skipAnnotation();
    }
    return object;
  }

  #array(): JavaValue[] | Uint8Array {
    const desc = this.#classDesc();
    const slot = this.#handles.push(null) - 1;
    const length = this.i32();
    if (!desc?.name.startsWith('[') || length < 0)
      throw new KeystoreFormatError('a malformed serialized array');
    const elementType = desc.name.slice(1);
    if (elementType === 'B') {
      const out = this.take(length).slice();
      this.#handles[slot] = out;
      return out;
    }
    const out: JavaValue[] = [];
    this.#handles[slot] = out;
    for (let i = 0; i < length; i++) out.push(this.#value(elementType[0] ?? 'L'));
    return out;
  }

  #classDesc(): ClassDesc | null {
    const tag = this.u8();
    if (tag === TC.NULL) return null;
    if (tag === TC.REFERENCE) {
      const referenced = this.#handle() as ClassDesc | null;
      if (typeof referenced?.name !== 'string' || !Array.isArray(referenced.fields)) {
        throw new KeystoreFormatError('a back-reference to something that is not a class');
      }
      return referenced;
    }
    if (tag === TC.PROXYCLASSDESC) throw new KeystoreFormatError('proxy classes are not read');
    if (tag !== TC.CLASSDESC)
      throw new KeystoreFormatError(`expected a class descriptor, got 0x${tag.toString(16)}`);
    const name = this.utf(this.u16());
    this.advance(8); // serialVersionUID
    const desc: ClassDesc = { name, flags: 0, fields: [], superClass: null };
    this.#handles.push(desc);
    desc.flags = this.u8();
    const count = this.u16();
    for (let i = 0; i < count; i++) {
      const type = String.fromCharCode(this.u8());
      const fieldName = this.utf(this.u16());
      if (type === 'L' || type === '[') this.content(); // the field's class name
      desc.fields.push({ type, name: fieldName });
    }
    this.#skipAnnotation();
    desc.superClass = this.#classDesc();
    return desc;
  }

  #value(type: string): JavaValue {
    switch (type) {
      case 'B':
        return this.view.getInt8(this.advance(1));
      case 'C':
        return String.fromCharCode(this.u16());
      case 'D':
        return this.view.getFloat64(this.advance(8));
      case 'F':
        return this.view.getFloat32(this.advance(4));
      case 'I':
        return this.i32();
      case 'J':
        return this.view.getBigInt64(this.advance(8));
      case 'S':
        return this.view.getInt16(this.advance(2));
      case 'Z':
        return this.u8() !== 0;
      default:
        return this.content();
    }
  }

  /** Skips what a class's writeObject (or annotateClass) wrote beyond its fields. */
  #skipAnnotation(): void {
    for (;;) {
      const tag = this.u8();
      if (tag === TC.ENDBLOCKDATA) return;
      if (tag === TC.BLOCKDATA) this.advance(this.u8());
      else if (tag === TC.BLOCKDATALONG) this.advance(this.i32());
      else {
        this.offset--;
        this.content();
      }
    }
  }

  #newHandle<T>(value: T): T {
    this.#handles.push(value);
    return value;
  }

  #handle(): unknown {
    const index = this.i32() - BASE_HANDLE;
    if (index < 0 || index >= this.#handles.length) throw new KeystoreFormatError('a bad back-reference');
    return this.#handles[index];
  }
}
