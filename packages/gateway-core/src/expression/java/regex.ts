/**
 * A Java pattern compiled to run in time linear in its input: its translation (regex-translation.ts),
 * on the engine that can run it so (linear-regex.ts: V8's own with its linear fallback, or RE2).
 * What the expression language and the configuration compile their constant patterns with; patterns
 * made at run time go through runtime-regex.ts.
 */
import { boundedRegex } from './linear-regex.ts';
import { javaRegexSource, translateJavaRegex } from './regex-translation.ts';

/**
 * Translates a Java regular expression into an equivalent JavaScript RegExp (never global or
 * sticky). Throws a `PORTICO_E_EXPRESSION` PorticoError for patterns Java or JavaScript would reject
 * and for Java constructs that have no JavaScript equivalent.
 */
export function compileJavaRegex(pattern: string): RegExp {
  return compileBounded(pattern, false);
}

/**
 * A Java pattern on V8's linear engine from its first character (or on RE2): for a pattern made at
 * run time, whose cost must follow its size (runtime-regex.ts).
 */
export function compileLinearJavaRegex(pattern: string): RegExp {
  return compileBounded(pattern, true);
}

function compileBounded(pattern: string, linearOnly: boolean): RegExp {
  const native = translateJavaRegex(pattern);
  // Linear time in the input, whatever the pattern and the input (see linear-regex.ts).
  return boundedRegex(
    pattern,
    native,
    () => {
      const plain = javaRegexSource(pattern, { endOfInputDollar: true });
      return plain.source === native.source ? undefined : new RegExp(plain.source, plain.flags);
    },
    linearOnly,
  );
}
