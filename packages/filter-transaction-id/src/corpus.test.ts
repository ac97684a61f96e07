import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/**
 * The corpus never declares TransactionIdOutboundFilter: its route files name the object the gateway
 * declares by default (the gateway's corpus test loads them). Any declaration that appears loads.
 */
describeCorpusDeclarations(['TransactionIdOutboundFilter'], [plugin], { mayBeUndeclared: true });
