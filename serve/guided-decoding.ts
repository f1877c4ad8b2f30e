// What a request asks its output to follow (vLLM's structured outputs, https://docs.vllm.ai/en/latest/features/structured_outputs.html,
// and guided tool calls), compiled once when the request is read so a bad schema is a 400 before any
// work: one closed union, one grammar per kind. Leaves out regex, EBNF grammars and structural tags.
import { alternativesNode, type GrammarNode, jsonValue, textNode } from './grammar-node.ts';
import { anyJsonObject, compileJsonSchema } from './json-schema-grammar.ts';
import { type GuidedTool, type ToolCallMode, toolCallGrammar } from './tool-call-grammar.ts';

export type GuidedSpec =
  /** `structured_outputs.choice` / `guided_choice`: exactly one of these strings. */
  | { readonly kind: 'choice'; readonly choices: readonly string[] }
  /** `response_format: {"type": "json_object"}` / `structured_outputs.json_object`: any JSON object. */
  | { readonly kind: 'json-object' }
  /** `response_format` `json_schema`, `structured_outputs.json`, `guided_json`: `field` names it in errors. */
  | { readonly kind: 'json-schema'; readonly schema: unknown; readonly field: string }
  /** `tool_choice` "required" or a named function, or tools marked `strict` under "auto". */
  | { readonly kind: 'tool-calls'; readonly tools: readonly GuidedTool[]; readonly mode: ToolCallMode };

export type GuidedKind = GuidedSpec['kind'];

export interface Guided {
  readonly spec: GuidedSpec;
  readonly grammar: GrammarNode;
  /** Equal for requests that ask for the same output: constraints (and their mask caches) are shared by it. */
  readonly key: string;
}

const grammars: { [K in GuidedKind]: (spec: Extract<GuidedSpec, { kind: K }>) => GrammarNode } = {
  choice: (spec) => alternativesNode(spec.choices.map(textNode)),
  'json-object': () => jsonValue(anyJsonObject()),
  'json-schema': (spec) => jsonValue(compileJsonSchema(spec.schema, spec.field)),
  'tool-calls': (spec) => toolCallGrammar(spec.tools, spec.mode),
};

/** Compiles `spec`; throws a 400 ServeError naming the field and keyword a schema cannot be guided by. */
export function compileGuided(spec: GuidedSpec): Guided {
  const grammar = (grammars[spec.kind] as (spec: GuidedSpec) => GrammarNode)(spec);
  const { field: _, ...meaning } = spec as GuidedSpec & { field?: string };
  return { spec, grammar, key: JSON.stringify(meaning) };
}
