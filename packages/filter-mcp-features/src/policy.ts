import { templatePattern } from './uri-template.ts';

/** One `allow` or `deny` object of the configuration: names, URIs and URI templates. */
export interface FeatureLists {
  tools: readonly string[];
  prompts: readonly string[];
  resources: readonly string[];
  'resources/templates': readonly string[];
}

interface CompiledLists {
  tools: ReadonlySet<string>;
  prompts: ReadonlySet<string>;
  resources: ReadonlySet<string>;
  templates: ReadonlySet<string>;
  /** The templates' patterns, which tell the resource URIs each template expands to. */
  templatePatterns: readonly RegExp[];
}

function compile(lists: FeatureLists): CompiledLists {
  const templates = [...new Set(lists['resources/templates'])];
  return {
    tools: new Set(lists.tools),
    prompts: new Set(lists.prompts),
    resources: new Set(lists.resources),
    templates: new Set(templates),
    templatePatterns: templates.map(templatePattern),
  };
}

/**
 * Which features a client may see and use. For each kind, an empty allow list allows everything,
 * a non-empty one only what it names; deny always wins, in calls and in lists alike. Tools and
 * prompts are named; resources are their URIs, templates their URI templates. A resource URI
 * counts as named by a template it is an expansion of: allowed by an allowed template (when
 * `resources` lists some URIs), refused by a denied one (decision 0107).
 */
export class FeaturePolicy {
  readonly #allow: CompiledLists;
  readonly #deny: CompiledLists;

  constructor(allow: FeatureLists, deny: FeatureLists) {
    this.#allow = compile(allow);
    this.#deny = compile(deny);
  }

  tool(name: string): boolean {
    return !this.#deny.tools.has(name) && (this.#allow.tools.size === 0 || this.#allow.tools.has(name));
  }

  prompt(name: string): boolean {
    return !this.#deny.prompts.has(name) && (this.#allow.prompts.size === 0 || this.#allow.prompts.has(name));
  }

  /** A resource URI: listed by `resources/list`, read by `resources/read`, subscribed to. */
  resource(uri: string): boolean {
    if (this.#deny.resources.has(uri) || matchesAny(this.#deny.templatePatterns, uri)) return false;
    if (this.#allow.resources.size === 0 || this.#allow.resources.has(uri)) return true;
    return matchesAny(this.#allow.templatePatterns, uri);
  }

  /** A resource template, by its URI template: listed by `resources/templates/list`. */
  template(uriTemplate: string): boolean {
    return (
      !this.#deny.templates.has(uriTemplate) &&
      (this.#allow.templates.size === 0 || this.#allow.templates.has(uriTemplate))
    );
  }

  /**
   * The `uri` of a completion's `ref/resource`, whose arguments the client asks completions for:
   * a template when it holds an expression (`{`), judged as one, else a resource's URI.
   */
  completionResource(uri: string): boolean {
    return uri.includes('{') ? this.template(uri) : this.resource(uri);
  }
}

function matchesAny(patterns: readonly RegExp[], uri: string): boolean {
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    if (pattern.test(uri)) return true;
  }
  return false;
}
