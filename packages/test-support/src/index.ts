export { type AmRequest, type AmServer, type AmServerOptions, startAmServer } from './am-server.ts';
export { makeAuditKeystore } from './audit-keystore.ts';
export {
  awaitsLaterWork,
  corpusAvailable,
  corpusFiles,
  corpusRoot,
  refusedByDesign,
  repositoryRoot,
  requireCorpusUnderCi,
} from './corpus.ts';
export {
  type CorpusDeclaration,
  corpusDeclarationProblems,
  corpusDeclarations,
} from './corpus-declarations.ts';
export { corpusReport } from './corpus-report.ts';
export { loadCorpusRoute } from './corpus-route.ts';
export {
  type CorpusDeclarationSuiteOptions,
  describeCorpusDeclarations,
  groovyRefusal,
} from './corpus-suite.ts';
export { startHttpServer, type TestServer } from './http-server.ts';
export {
  type LlmAnswer,
  type LlmProviderServer,
  type LlmRequest,
  type StreamHold,
  startLlmProviderServer,
} from './llm-provider.ts';
export {
  type OidcProvider,
  type OidcProviderOptions,
  type RecordedRequest,
  type RelyingParty,
  type RelyingPartyOptions,
  startOidcProvider,
  type UserClaims,
} from './oidc-provider.ts';
export {
  type RedisSentinelGroup,
  redisBinariesAvailable,
  startRedisSentinelGroup,
} from './redis-sentinel.ts';
export { instanceWithScripts } from './scripts.ts';
export { serviceExecutable, serviceSetting, serviceUrl } from './services.ts';
export { startTcpRelay, type TcpRelay } from './tcp-relay.ts';
export {
  type ReceivedRequest,
  startUpstream,
  type Upstream,
  type UpstreamAnswer,
  upstreamForSuite,
} from './upstream.ts';
export { waitFor } from './wait.ts';
