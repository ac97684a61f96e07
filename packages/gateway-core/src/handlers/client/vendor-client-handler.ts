import type { Context } from '../../context/context.ts';
import type { Request } from '../../http/message.ts';
import { ClientHandler, type ClientHandlerOptions } from './client-handler.ts';

export const DEFAULT_TRANSACTION_ID_HEADER = 'X-ForgeRock-TransactionId';

export interface VendorClientHandlerOptions extends ClientHandlerOptions {
  /** The header carrying the transaction ID; the incumbents' name unless said otherwise. */
  transactionIdHeader?: string;
}

// Sub-transaction counters per request. The attributes object is created once per request and
// shared by every child context, so it identifies the request; the WeakMap lets it go with it.
const counters = new WeakMap<object, number>();

/**
 * A ClientHandler that also tells the upstream which transaction a call belongs to, so that the
 * audit trails of both sides can be joined. As the incumbents' TransactionIdOutboundFilter does,
 * each call gets a sub-transaction ID, `<transactionId>/<n>` with n counting from 0 within the
 * request; any value the request already carries in that header is replaced.
 */
export class VendorClientHandler extends ClientHandler {
  readonly transactionIdHeader: string;

  constructor(options: VendorClientHandlerOptions = {}) {
    super(options);
    this.transactionIdHeader = options.transactionIdHeader ?? DEFAULT_TRANSACTION_ID_HEADER;
  }

  protected override additionalHeaders(
    context: Context,
    request: Request,
  ): readonly (readonly [string, string])[] {
    const n = counters.get(context.attributes) ?? 0;
    counters.set(context.attributes, n + 1);
    return [
      ...super.additionalHeaders(context, request),
      [this.transactionIdHeader, `${context.transactionId}/${n}`],
    ];
  }
}
