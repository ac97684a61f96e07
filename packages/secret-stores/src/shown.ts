/**
 * A path a store's message names: `resolved` quoted, or, when its setting came from the environment
 * (`written`, from the heaplet context's `configWritten`), the setting described by what was written,
 * since an operator may have put a secret there by mistake.
 */
export function shown(resolved: string, setting: string, written: string | undefined): string {
  return written === undefined
    ? `'${resolved}'`
    : `named by the value of ${written} (${setting.length} characters, not shown)`;
}
