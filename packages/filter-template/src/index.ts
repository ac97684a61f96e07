import { type Bindings, compile, ErrorCode, type Expression, PorticoError } from '@portico/gateway-core';

/**
 * The reference plugin. Copy this folder to start a new filter, decorator or audit handler package:
 * rename it, list its types in package.json's `portico` block, and keep the shape — configuration
 * read and every expression compiled once when the object is created, nothing parsed per request.
 *
 * TemplateFilter sets one request header to a template (`"value": "Bearer ${attributes.token}"`).
 * The heap and the Filter interface arrive with the gateway runtime; until then the filter works on
 * a plain request of headers.
 */
export interface TemplateFilterConfig {
  /** Header to set. */
  header: string;
  /** Template evaluated per request; a null result removes the header. */
  value: string;
}

export interface PlainRequest {
  headers: Record<string, string[]>;
}

export class TemplateFilter {
  private readonly header: string;
  private readonly value: Expression<string>;

  constructor(config: TemplateFilterConfig) {
    if (typeof config.header !== 'string' || config.header === '') {
      throw new PorticoError(ErrorCode.CONFIG, 'header is required', {
        jsonPath: '$.config.header',
        expected: 'a header name',
      });
    }
    this.header = config.header;
    this.value = compile(config.value, 'string');
  }

  async filter<R>(
    request: PlainRequest,
    bindings: Bindings,
    next: (request: PlainRequest) => Promise<R>,
  ): Promise<R> {
    const value = this.value.evaluate(bindings);
    if (value === null) delete request.headers[this.header];
    else request.headers[this.header] = [value];
    return next(request);
  }
}

export const types = { TemplateFilter } as const;
