export {
  awaitsLaterWork,
  corpusAvailable,
  corpusFiles,
  corpusRoot,
  repositoryRoot,
  requireCorpusUnderCi,
} from './corpus.ts';
export {
  type CorpusDeclaration,
  corpusDeclarationProblems,
  corpusDeclarations,
} from './corpus-declarations.ts';
export { type PluginHeapOptions, pluginHeap, recordingHandler, testContext } from './heap.ts';
export { serviceUrl } from './services.ts';
