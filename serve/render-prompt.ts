// A chat request's prompt token ids, through the model's own chat template. `tool_choice: "none"`
// renders no tools (vLLM with --exclude-tools-when-tool-choice-none). `continue_final_message` leaves
// the last assistant message open so the model continues it, cut as transformers' apply_chat_template
// does: after the last occurrence of that message's text in the render.
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import type { ChatRequest } from './chat-request.ts';
import { ServeError } from './serve-error.ts';
import { errorMessage } from '../protocol/error-message.ts';

export function renderChatPrompt(
  tokenizer: ChatTokenizer,
  request: Pick<
    ChatRequest,
    'messages' | 'tools' | 'toolChoice' | 'addGenerationPrompt' | 'continueFinalMessage' | 'templateKwargs'
  >,
): number[] {
  let text: string;
  try {
    text = tokenizer.applyChatTemplate(request.messages, {
      tools: request.toolChoice === 'none' ? undefined : request.tools,
      addGenerationPrompt: request.addGenerationPrompt,
      extra: request.templateKwargs,
    });
  } catch (cause) {
    throw new ServeError('bad-request', errorMessage(cause), 'messages', { cause });
  }
  if (request.continueFinalMessage) {
    const last = request.messages.at(-1);
    const index = request.messages.length - 1;
    if (last?.role !== 'assistant' || !last.content) {
      throw new ServeError(
        'bad-request',
        `continue_final_message needs a final assistant message with text; messages.${index} is not one`,
        `messages.${index}`,
      );
    }
    const at = text.lastIndexOf(last.content);
    if (at === -1) {
      throw new ServeError(
        'bad-request',
        `the chat template does not render messages.${index}.content verbatim, so it cannot be continued`,
        `messages.${index}.content`,
      );
    }
    text = text.slice(0, at + last.content.length);
  }
  return tokenizer.encode(text);
}
