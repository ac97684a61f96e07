/** Java semantics the expression language needs: regular expressions, strings, URIs, properties. */
export { parseJavaProperties } from './properties.ts';
export {
  compileJavaRegex,
  find,
  findFrom,
  fullMatch,
  isFound,
  RUNTIME_REGEX_BUDGET,
  runtimeJavaRegex,
} from './regex.ts';
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
