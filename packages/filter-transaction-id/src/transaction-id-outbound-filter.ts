import {
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';

/** The header the incumbents' applications read the calling transaction from. */
export const TRANSACTION_ID_HEADER = 'X-ForgeRock-TransactionId';

/**
 * The count of sub-transactions of a request, kept on its attributes (one object per request, shared
 * by its child contexts) under a registered symbol that the core's VendorClientHandler uses too: a
 * request's outbound calls are numbered once, whichever of the two sends them.
 */
const SUB_TRANSACTIONS = Symbol.for('portico.subTransactions');

/** The next sub-transaction ID of the request: `<transactionId>/<n>`, n counting from 0. */
export function nextSubTransactionId(context: Context): string {
  const attributes = context.attributes as Record<symbol, number | undefined>;
  const n = attributes[SUB_TRANSACTIONS] ?? 0;
  attributes[SUB_TRANSACTIONS] = n + 1;
  return `${context.transactionId}/${n}`;
}

/**
 * TransactionIdOutboundFilter tells the server a request goes to which transaction it belongs to,
 * so that the audit trails of both sides can be joined: it sets `X-ForgeRock-TransactionId` to a
 * sub-transaction ID of the request's transaction, replacing whatever value the request carried (a
 * client must not choose the ID the upstream logs). Put it in front of a client handler; the gateway
 * declares one under that name, which route files use without declaring it.
 */
export class TransactionIdOutboundFilter implements Filter {
  filter(context: Context, request: Request, next: Handler): Promise<Response> {
    request.headers.set(TRANSACTION_ID_HEADER, nextSubTransactionId(context));
    return next.handle(context, request);
  }
}

export const TransactionIdOutboundFilterHeaplet = defineHeaplet({
  type: 'TransactionIdOutboundFilter',
  kind: 'filter',
  // No settings, as the incumbents' has none.
  config: s.object({}),
  create: () => new TransactionIdOutboundFilter(),
});
