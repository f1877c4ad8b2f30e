// The chat template written into the tiny checkpoints' tokenizer_config.json: ChatML with tools, laid
// out like Qwen2.5's template (tools block in the system turn, Hermes-style <tool_call> JSON, tool
// results as <tool_response> inside a user turn) but shorter, since every token of a CPU-trained
// episode costs. Leaves out Qwen's default system prompt and any reasoning (<think>) handling.
//
// Invariants the trainer relies on (tested): the generation prompt is `<|im_start|>assistant\n` and
// an assistant message renders as exactly that prompt + its text + `<|im_end|>\n`, so the prompt
// the model was sampled from is always a prefix of the rendered conversation; tool calls render as
// `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>`, so well-formed sampled calls re-render to
// the same tokens. Unlike Qwen's, tools are listed as bare signatures (`Tools: lookup(key)`), with no
// JSON schemas, descriptions or instructions on the call format: a random tiny model cannot read them
// (it learns the format from demonstrations), and on a CPU every prompt token is paid for in every
// training sequence. Measured on a three-hop demo episode: 370 tokens with a Qwen-style tools block,
// 219 with signatures (and a shorter system prompt), 163 with the demo's extra vocabulary pieces too.
// Parameter names are the properties dict iterated directly, not `.items()`: the JS renderer
// (@huggingface/jinja) looks a key up before a method, so a parameter named `items` broke the render, and
// a tool author's or a proxy client's names must all render (Python Jinja2 gives the same text either way).

export const tinyChatTemplate = [
  "{%- set has_system = messages | length > 0 and messages[0].role == 'system' %}",
  '{%- if tools or has_system %}',
  "  {{- '<|im_start|>system\\n' }}",
  '  {%- if has_system %}{{- messages[0].content }}{%- endif %}',
  '  {%- if tools %}',
  "    {%- if has_system %}{{- '\\n' }}{%- endif %}",
  "    {{- 'Tools:' }}",
  '    {%- for tool in tools %}',
  '      {%- set fn = tool.function if tool.function is defined else tool %}',
  "      {{- ' ' + fn.name + '(' }}",
  '      {%- if fn.parameters is defined and fn.parameters.properties is defined %}',
  '        {%- for name in fn.parameters.properties %}',
  "          {%- if not loop.first %}{{- ', ' }}{%- endif %}{{- name }}",
  '        {%- endfor %}',
  '      {%- endif %}',
  "      {{- ')' }}",
  '    {%- endfor %}',
  '  {%- endif %}',
  "  {{- '<|im_end|>\\n' }}",
  '{%- endif %}',
  '{%- for message in messages %}',
  "  {%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}",
  "    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}",
  "  {%- elif message.role == 'assistant' %}",
  "    {{- '<|im_start|>assistant\\n' }}",
  '    {%- if message.content %}{{- message.content }}{%- endif %}',
  '    {%- if message.tool_calls %}',
  '      {%- for call in message.tool_calls %}',
  "        {%- if message.content or not loop.first %}{{- '\\n' }}{%- endif %}",
  '        {%- set fn = call.function if call.function is defined else call %}',
  '        {{- \'<tool_call>\\n{"name": \' + (fn.name | tojson) + \', "arguments": \' }}',
  '        {%- if fn.arguments is string %}{{- fn.arguments }}{%- else %}{{- fn.arguments | tojson }}{%- endif %}',
  "        {{- '}\\n</tool_call>' }}",
  '      {%- endfor %}',
  '    {%- endif %}',
  "    {{- '<|im_end|>\\n' }}",
  "  {%- elif message.role == 'tool' %}",
  "    {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}",
  "    {{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}",
  "    {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}",
  "  {%- elif message.role != 'system' %}",
  "    {{- raise_exception('unsupported message role: ' + message.role) }}",
  '  {%- endif %}',
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
].join('\n');
