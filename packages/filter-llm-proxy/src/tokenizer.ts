/**
 * OpenAI's tokenizers (`gpt-tokenizer`), loaded once per process when a filter first needs one:
 * each is a module of several megabytes that takes a few hundred milliseconds to load, so a filter
 * loads the encodings it will likely use when it is created, not during a request.
 */
export type EncodingName = 'o200k_base' | 'cl100k_base';

export interface Encoding {
  countTokens(text: string): number;
}

type Module = {
  countTokens(text: string, options?: { allowedSpecial?: unknown }): number;
  ALL_SPECIAL_TOKENS?: unknown;
};

const loaded = new Map<EncodingName, Encoding>();
const loading = new Map<EncodingName, Promise<Encoding>>();

async function importEncoding(name: EncodingName): Promise<Module> {
  return name === 'o200k_base'
    ? ((await import('gpt-tokenizer/encoding/o200k_base')) as unknown as Module)
    : ((await import('gpt-tokenizer/encoding/cl100k_base')) as unknown as Module);
}

/** Loads an encoding (once per process); later calls of `encodingIfLoaded` return it at once. */
export function loadEncoding(name: EncodingName): Promise<Encoding> {
  const ready = loaded.get(name);
  if (ready) return Promise.resolve(ready);
  let pending = loading.get(name);
  if (pending === undefined) {
    pending = importEncoding(name).then((module) => {
      // Text from a client may contain `<|endoftext|>` and the like: counted as the special tokens
      // they spell, not refused (the tokenizer throws on them by default).
      const options = { allowedSpecial: module.ALL_SPECIAL_TOKENS ?? 'all' };
      const encoding: Encoding = { countTokens: (text) => module.countTokens(text, options) };
      loaded.set(name, encoding);
      return encoding;
    });
    loading.set(name, pending);
  }
  return pending;
}

/** The encoding when it is loaded already, else undefined. */
export function encodingIfLoaded(name: EncodingName): Encoding | undefined {
  return loaded.get(name);
}

/**
 * The encoding of an OpenAI model name, or undefined for a name that is not OpenAI's: the o200k
 * encoding of GPT-4o and later (GPT-4.1, 4.5, 5, o1, o3, o4, gpt-oss), cl100k of GPT-4, GPT-3.5
 * and the embedding models.
 */
export function encodingOfModel(model: string): EncodingName | undefined {
  const name = model.toLowerCase().replace(/^openai\//, '');
  if (
    /^(gpt-4o|gpt-4\.[1-9]|gpt-[5-9]|gpt-oss|gpt-realtime|gpt-audio|chatgpt-|o[1-9](-|$)|codex-)/.test(name)
  )
    return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|gpt-35|text-embedding-)/.test(name)) return 'cl100k_base';
  return undefined;
}
