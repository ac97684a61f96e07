import { nodeHttp } from './node-http.ts';

const { STATUS_CODES } = nodeHttp;

/**
 * A response status as expressions see it: `${response.status.code == 404}`,
 * `${response.status.family == 'CLIENT_ERROR'}`.
 */
export class Status {
  readonly code: number;
  readonly reasonPhrase: string;

  constructor(code: number, reasonPhrase?: string) {
    this.code = code;
    this.reasonPhrase = reasonPhrase ?? STATUS_CODES[code] ?? 'Unknown';
  }

  get family(): string {
    return FAMILIES[Math.floor(this.code / 100)] ?? 'UNKNOWN';
  }

  get isSuccessful(): boolean {
    return this.code >= 200 && this.code < 300;
  }

  get isClientError(): boolean {
    return this.code >= 400 && this.code < 500;
  }

  get isServerError(): boolean {
    return this.code >= 500 && this.code < 600;
  }

  toString(): string {
    return `${this.code} ${this.reasonPhrase}`;
  }
}

const FAMILIES: Record<number, string> = {
  1: 'INFORMATIONAL',
  2: 'SUCCESSFUL',
  3: 'REDIRECTION',
  4: 'CLIENT_ERROR',
  5: 'SERVER_ERROR',
};
