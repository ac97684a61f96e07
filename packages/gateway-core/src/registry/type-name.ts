/**
 * Configurations written for the Java incumbents name some types by their class
 * (`org.forgerock.audit.handlers.csv.CsvAuditEventHandler`). Only the simple class name identifies a
 * type here, whatever the package prefix. Returns undefined when the name has no package prefix.
 */
export function simpleClassName(type: string): string | undefined {
  const dot = type.lastIndexOf('.');
  if (dot <= 0 || dot === type.length - 1) return undefined;
  return type.slice(dot + 1);
}
