export { corpusAvailable, corpusFiles, corpusRoot, repositoryRoot } from './corpus.ts';
export { serviceUrl } from './services.ts';
