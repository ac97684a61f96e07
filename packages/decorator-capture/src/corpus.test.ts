import { describeCorpusDeclarations } from '@portico/test-support';
import plugin from './index.ts';

/** Every declaration of the package's types in the compatibility corpus loads unchanged. */
describeCorpusDeclarations(['CaptureDecorator', 'CaptureFilter'], [plugin], {
  brokenForTheIncumbents: new Map([
    [
      'ForgeRock__forgeops/docker/ig/config-profiles/ig-only/config/config.json $.heap[1]',
      // A log sink's settings pasted into the decorator: its `type`, and an inline logSink without one.
      'an inline logSink declaration without a type',
    ],
  ]),
});
