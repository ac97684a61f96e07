export {
  awaitsLaterWork,
  corpusAvailable,
  corpusFiles,
  corpusRoot,
  repositoryRoot,
  requireCorpusUnderCi,
} from './corpus.ts';
export { serviceUrl } from './services.ts';
