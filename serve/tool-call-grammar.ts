// The grammar of tool calls in the layout the chat templates render and parse-tool-calls.ts parses
// (Hermes / Qwen2.5 / Qwen3: `<tool_call>\n{"name": "<name>", "arguments": <arguments>}\n</tool_call>`,
// calls separated by "\n"), with the name one of the offered tools and the arguments that tool's
// parameters schema. vLLM's semantics (https://docs.vllm.ai/en/latest/features/tool_calling.html):
// `required` makes at least one call, a named function exactly that one, and with `auto` a tool that
// sets `strict: true` has its calls' arguments constrained while the model may still answer in text.
// Unlike vLLM, which guides `required` and named calls as bare JSON (`[{"name", "parameters"}]` or the
// arguments alone) outside the model's format, the calls here are written the way the template renders
// them, so the sampled tokens are the tokens the next turn's prompt and the trainer's render contain.
import {
  alternativesNode,
  freeTextNode,
  type GrammarNode,
  type JsonNode,
  jsonValue,
  repeatNode,
  sequenceNode,
  textNode,
} from './grammar-node.ts';
import { anyJsonObject, compileJsonSchema } from './json-schema-grammar.ts';
import { ServeError } from './serve-error.ts';

/** An offered tool as the grammar needs it. */
export interface GuidedTool {
  readonly name: string;
  /** Its parameters schema; undefined: any object (OpenAI's and vLLM's reading of a missing schema). */
  readonly parameters: Readonly<Record<string, unknown>> | undefined;
  /** OpenAI's `strict`: under "auto", its calls' arguments are held to `parameters`. */
  readonly strict: boolean;
}

export type ToolCallMode =
  /** One or more calls of any offered tool (one when not `parallel`), nothing else. */
  | { readonly kind: 'required'; readonly parallel: boolean }
  /** Exactly one call of this tool. */
  | { readonly kind: 'named'; readonly name: string }
  /** Free text; each call it opens must be well-formed (arguments checked for tools marked strict). */
  | { readonly kind: 'strict-auto' };

const openTag = '<tool_call>';
const closeText = '}\n</tool_call>';
const separator = '\n';

/** A tool's arguments: its parameters schema (OpenAI: a JSON object; none given = any object). */
function argumentsNode(tool: GuidedTool, index: number, strict: boolean): JsonNode {
  const field = `tools.${index}.function.parameters`;
  const { parameters } = tool;
  if (!strict || parameters === undefined) return anyJsonObject();
  const node = compileJsonSchema(parameters, field);
  const objects = node.kind === 'any-of' ? node.options.filter((option) => option.kind === 'object') : [node];
  const object = objects.find((option) => option.kind === 'object');
  if (!object || objects.length !== 1) {
    throw new ServeError(
      'bad-request',
      `${field}: must describe one JSON object (tool arguments are an object)`,
      field,
    );
  }
  return object;
}

/** The text after `<tool_call>`: the call's JSON object and the closing tag. */
function callBody(tool: GuidedTool, index: number, strict: boolean): GrammarNode {
  return sequenceNode([
    textNode(`\n{"name": ${JSON.stringify(tool.name)}, "arguments": `),
    jsonValue(argumentsNode(tool, index, strict)),
    textNode(closeText),
  ]);
}

const wholeCall = (tool: GuidedTool, index: number): GrammarNode =>
  sequenceNode([textNode(openTag), callBody(tool, index, true)]);

export function toolCallGrammar(tools: readonly GuidedTool[], mode: ToolCallMode): GrammarNode {
  switch (mode.kind) {
    case 'required':
      return repeatNode(
        alternativesNode(tools.map(wholeCall)),
        separator,
        1,
        mode.parallel ? Number.POSITIVE_INFINITY : 1,
      );
    case 'named': {
      const index = tools.findIndex((tool) => tool.name === mode.name);
      if (index === -1) throw new Error(`no tool named ${mode.name}`);
      return wholeCall(tools[index] as GuidedTool, index);
    }
    case 'strict-auto':
      return freeTextNode(
        openTag,
        alternativesNode(tools.map((tool, index) => callBody(tool, index, tool.strict))),
      );
  }
}
