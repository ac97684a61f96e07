import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { SyslogAuditEventHandlerHeaplet } from './syslog-audit-event-handler.ts';

export {
  ENTERPRISE_NUMBER,
  escapeParamValue,
  FACILITIES,
  type Facility,
  SEVERITIES,
  type Severity,
  SyslogFormatter,
} from './format.ts';
export {
  APP_NAME,
  type SeverityMapping,
  SyslogAuditEventHandler,
  SyslogAuditEventHandlerHeaplet,
  type SyslogCounters,
  type SyslogHandlerSettings,
  syslogHandlerOf,
} from './syslog-audit-event-handler.ts';
export { TcpTransport, type Transport, type TransportCounters, UdpTransport } from './transport.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [SyslogAuditEventHandlerHeaplet],
});
