import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { CsvAuditEventHandlerHeaplet } from './csv-audit-event-handler.ts';

export {
  CsvAuditEventHandler,
  CsvAuditEventHandlerHeaplet,
  type CsvHandlerSettings,
  csvHandlerOf,
  type HandlerClocks,
} from './csv-audit-event-handler.ts';
export { type CsvFormat, DEFAULT_FORMAT } from './csv-format.ts';
export { readTamperEvidenceKeys, type TamperEvidenceKeys } from './tamper-evidence.ts';
export {
  type Verification,
  VerificationUsageError,
  verifyCsvFile,
  verifyPlain,
  verifyTamperEvident,
} from './verify.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [CsvAuditEventHandlerHeaplet],
});
