export {
  type CompiledScript,
  compileScript,
  DEFAULT_SCRIPT_TIMEOUT_MS,
  describeScriptError,
  EXACTLY_ONE_SCRIPT,
  exactlyOneScript,
  JAVASCRIPT,
  type ScriptDeclaration,
  type ScriptOptions,
  scriptArgs,
  scriptFields,
} from './script.ts';
