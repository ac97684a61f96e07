/**
 * Keys that are comments wherever settings are read, neither settings nor decorations: those starting
 * with `_`, as real configurations use them (`"_comment"`, or a setting switched off by renaming it
 * `_keyManager`), and `$schema`, which names the JSON Schema an editor checks the file with
 * (`portico schema`).
 */
export const isCommentKey = (key: string): boolean => key.startsWith('_') || key === '$schema';
