import { describeCorpusDeclarations } from '@portico/gateway-core/testing';
import plugin from './index.ts';

/** Every declaration of the package's types in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['AuditDecorator', 'MonitorEndpointHandler'], [plugin]);
