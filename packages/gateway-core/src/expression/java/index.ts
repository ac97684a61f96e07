/** Java semantics the expression language needs: regular expressions, strings, URIs, properties. */
export { parseJavaProperties } from './properties.ts';
export { compileJavaRegex } from './regex.ts';
export { find, findFrom, fullMatch, isFound } from './regex-matching.ts';
export { RUNTIME_REGEX_BUDGET, runtimeJavaRegex } from './runtime-regex.ts';
export { javaReplaceAll, javaReplaceFirst, javaSplit, javaStringReplace, patternFor } from './strings.ts';
export {
  formDecodeParameterNameOrValue,
  formEncodeParameterNameOrValue,
  URI_FUNCTIONS,
  urlDecode,
  urlDecodeFragment,
  urlDecodePathElement,
  urlDecodeQueryParameterNameOrValue,
  urlDecodeUserInfo,
  urlEncode,
  urlEncodeFragment,
  urlEncodePathElement,
  urlEncodeQueryParameterNameOrValue,
  urlEncodeUserInfo,
} from './uris.ts';
