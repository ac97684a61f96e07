import { fail } from '../config/parse-context.ts';
import type { Schema } from '../config/schema.ts';
import { quoteSetting } from '../config/secret-redaction.ts';
import { Uri, uriOrProblem } from '../http/uri.ts';
import { fromText } from './client/schema-helpers.ts';

/**
 * A URI setting (a route's or a Dispatch binding's `baseURI`), read as the configuration loads. A
 * malformed one is reported at its JSON path, quoted as written, or described when it came from the
 * environment: a base URI there may carry credentials (`http://user:password@host`).
 */
export function uriSetting(): Schema<Uri> {
  return fromText(
    'a URI',
    (text, path, ctx) => {
      const uri = uriOrProblem(text);
      if (uri instanceof Uri) return uri;
      return fail(ctx, path, uri.message(quoteSetting(ctx, path, text)), uri.expected);
    },
    () => ({ type: 'string', format: 'uri-reference' }),
  );
}
