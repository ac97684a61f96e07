import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { TransactionIdOutboundFilterHeaplet } from './transaction-id-outbound-filter.ts';

export {
  nextSubTransactionId,
  TRANSACTION_ID_HEADER,
  TransactionIdOutboundFilter,
  TransactionIdOutboundFilterHeaplet,
} from './transaction-id-outbound-filter.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [TransactionIdOutboundFilterHeaplet],
});
