// The tokenizer package's public surface: Hugging Face tokenizer + chat template, the tiny checkpoints'
// tokenizer files, Hermes tool-call parsing and the training render. Leaves out the test fixtures.
export { type ChatTemplateOptions, type ChatTokenizer, createTokenizer } from './chat-tokenizer.ts';
export { loadTokenizer } from './load-tokenizer.ts';
export {
  type ParsedAssistantOutput,
  parseAssistantOutput,
  type ToolCallStreamState,
  toolCallStreamState,
} from './parse-tool-calls.ts';
export {
  type AssistantSpan,
  renderForTraining,
  TemplatePrefixError,
  type TokenDrift,
  type TrainingMessage,
  type TrainingRender,
} from './render-for-training.ts';
export { tinyChatTemplate } from './tiny-chat-template.ts';
export { type TinyTokenizerFiles, type TinyTokenizerOptions, tinyTokenizerFiles } from './tiny-tokenizer.ts';
