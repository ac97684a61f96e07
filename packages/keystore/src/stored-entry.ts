/** An entry of a keystore file as read, before any key is decrypted. */
export interface StoredEntry {
  /** The alias as the file writes it; lookups ignore case, as Java's keystores do. */
  alias: string;
  kind: 'private' | 'secret' | 'certificate';
  /**
   * `private` and `secret`: a PKCS #8 EncryptedPrivateKeyInfo when `encrypted` (JKS's own scheme
   * for JKS files), else a PrivateKeyInfo. `certificate`: the X.509 certificate.
   */
  der: Uint8Array;
  encrypted: boolean;
  /** A JCEKS secret key: `der` is the sealed (encrypted, serialized) key, these its PBE parameters. */
  sealedParams?: Uint8Array;
  /** For a private key: the certificate of its public key, when the file holds it. */
  certificate?: Uint8Array;
}
