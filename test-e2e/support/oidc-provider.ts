// The provider helper lives in @portico/test-support, which the packages' own suites use too.
export {
  type OidcProvider,
  type OidcProviderOptions,
  type RelyingParty,
  type RelyingPartyOptions,
  startOidcProvider,
} from '@portico/test-support';
