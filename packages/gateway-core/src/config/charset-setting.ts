import { charsetDecoder } from '../http/charset.ts';
import type { Schema } from './schema.ts';
import { s } from './schema-builders.ts';

/**
 * A `charset` setting: the name of a character set Portico can decode (Java's names, `UTF-8`,
 * `ISO-8859-1`, `windows-1252` ...), UTF-8 when absent. An unknown name is a load error.
 */
export function charsetSetting(defaultCharset = 'UTF-8'): Schema<string> {
  return s
    .string()
    .default(defaultCharset)
    .refine(
      (name) => (charsetDecoder(name) ? undefined : `'${name}' is not a known character set`),
      'a character set such as UTF-8',
    );
}
