import type { Context } from '../../context/context.ts';
import type { Request } from '../../http/message.ts';
import { ClientHandler, type ClientHandlerOptions } from './client-handler.ts';

export const DEFAULT_TRANSACTION_ID_HEADER = 'X-ForgeRock-TransactionId';

export interface VendorClientHandlerOptions extends ClientHandlerOptions {
  /** The header carrying the transaction ID; the incumbents' name unless said otherwise. */
  transactionIdHeader?: string;
}

/**
 * Where a request's count of sub-transactions is kept: on its attributes object, created once per
 * request and shared by every child context, under a symbol no expression can name. A registered
 * symbol, so that the TransactionIdOutboundFilter of @portico/filter-transaction-id counts on the
 * same number and no two calls of one request get the same ID.
 */
const SUB_TRANSACTIONS = Symbol.for('portico.subTransactions');

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
    const attributes = context.attributes as Record<symbol, number | undefined>;
    const n = attributes[SUB_TRANSACTIONS] ?? 0;
    attributes[SUB_TRANSACTIONS] = n + 1;
    return [
      ...super.additionalHeaders(context, request),
      [this.transactionIdHeader, `${context.transactionId}/${n}`],
    ];
  }
}
