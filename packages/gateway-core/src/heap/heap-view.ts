import type { Kind } from '../kinds.ts';
import type { Logger } from '../logging.ts';
import type { SecretsProvider } from '../secrets/secrets.ts';

/**
 * The heap as a plugin sees it: what `create` and a decorator may look up beyond the references
 * their configuration resolves. Narrow on purpose, so that the heap's machinery (declaring,
 * creating, destroying, child heaps) can change without breaking a plugin.
 */
export interface HeapView {
  /** The object named `name` here, in a parent heap or among the defaults, created on first use. */
  get<T = unknown>(name: string, kind?: Kind): Promise<T>;
  /** Whether `get(name)` finds a declaration. */
  has(name: string): boolean;
  readonly logger: Logger;
  /** The log sink objects of this heap write to when their declaration names none (config.json's `logSink`). */
  readonly logSinkName: string;
  /**
   * One value per gateway, made by `make` on first use (given the gateway's own logger): what
   * objects anywhere in one configuration share (an audit system), while two gateways in one
   * process (a reload, tests) never do. A key is namespaced by its package (`@portico/x:what`).
   */
  shared<T>(key: string, make: (logger: Logger) => T): T;
  /**
   * The secrets of objects that name no `secretsProvider`: the stores of this route's `secrets`
   * block, then the secret stores this heap declares, then its parent's (up to config.json's and
   * admin.json's). Without a store declared, nothing reads the environment for a secret.
   */
  readonly secrets: SecretsProvider;
}
