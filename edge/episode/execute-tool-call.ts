// One tool call from decoding its arguments to the observation the model sees next. Every failure
// becomes data (an error observation with a code), never an exception: the episode goes on.
import type { ToolCall } from '../../protocol/chat.ts';
import type { Capabilities } from '../environments/capabilities.ts';
import type { Tool } from '../environments/tool.ts';
import { ToolRefusal } from '../environments/tool-refusal.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import type { ToolErrorCode } from '../../protocol/tool-error-code.ts';

export interface ToolExecution {
  /** The tool message content: the tool's output, or `{"error": "..."}`. */
  readonly content: string;
  readonly error?: { readonly code: ToolErrorCode; readonly message: string };
}

export interface ToolCallContext<TTask> {
  readonly tools: readonly Tool<TTask>[];
  readonly task: TTask;
  readonly capabilities: Capabilities;
  readonly defaultTimeoutMs: number;
  /** A cap over every tool's own timeout: what is left of the episode's tool time (toolBudgetMs). */
  readonly maxTimeoutMs?: number;
  /** The episode's signal: cancelling the episode cancels the tool. */
  readonly signal?: AbortSignal;
}

/** Error messages reach the model and the store; a stack of driver text helps neither. */
const maxErrorMessageChars = 500;

export async function executeToolCall<TTask>(
  call: ToolCall,
  context: ToolCallContext<TTask>,
): Promise<ToolExecution> {
  const name = call.function.name;
  const tool = context.tools.find((candidate) => candidate.name === name);
  if (!tool) {
    const known = context.tools.map((candidate) => candidate.name).join(', ');
    return toolFailure('unknown-tool', `unknown tool "${name}"; available: ${known || 'none'}`);
  }
  const decoded = decodeArguments(call.function.arguments);
  if (!decoded.ok) return toolFailure('malformed-call', decoded.message);
  const parsed = tool.parseArguments(decoded.value);
  if (!parsed.ok) return toolFailure('invalid-arguments', `invalid arguments for ${name}: ${parsed.message}`);
  const timeoutMs = Math.min(tool.timeoutMs ?? context.defaultTimeoutMs, context.maxTimeoutMs ?? Infinity);
  const ran = await runWithTimeout(
    (signal) => tool.run(parsed.value, { ...context.capabilities, task: context.task, signal }),
    timeoutMs,
    context.signal,
  );
  switch (ran.kind) {
    case 'timeout':
      return toolFailure('tool-timeout', `${name} did not finish within ${timeoutMs} ms`);
    case 'threw':
      return ran.error instanceof ToolRefusal
        ? toolFailure('refused', ran.error.message)
        : toolFailure('tool-error', `${name} failed: ${errorMessage(ran.error)}`);
    case 'returned': {
      const content = observationText(ran.value);
      return content === undefined
        ? toolFailure('tool-error', `${name} returned a value that is not JSON-serialisable`)
        : { content };
    }
  }
}

/** A failed call's observation: `{"error": "..."}` with its code, the message cut to a readable length. */
export function toolFailure(code: ToolErrorCode, message: string): ToolExecution {
  const short =
    message.length > maxErrorMessageChars ? `${message.slice(0, maxErrorMessageChars)}…` : message;
  return { content: JSON.stringify({ error: short }), error: { code, message: short } };
}

type Decoded = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** Arguments arrive as JSON text exactly as the model wrote them; an empty string means no arguments. */
export function decodeArguments(text: string): Decoded {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `arguments are not valid JSON (${errorMessage(error)})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      message: `arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}`,
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

type Ran = { kind: 'returned'; value: unknown } | { kind: 'threw'; error: unknown } | { kind: 'timeout' };

async function runWithTimeout(
  run: (signal: AbortSignal) => Promise<unknown> | unknown,
  timeoutMs: number,
  parent?: AbortSignal,
): Promise<Ran> {
  const controller = new AbortController();
  const onParentAbort = () => controller.abort(parent?.reason);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  if (parent?.aborted) controller.abort(parent.reason);
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The tool may ignore its signal; the race still returns on time and the late result is dropped.
  const timedOut = new Promise<Ran>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
      resolve({ kind: 'timeout' });
    }, timeoutMs);
  });
  const finished = (async (): Promise<Ran> => {
    try {
      return { kind: 'returned', value: await run(controller.signal) };
    } catch (error) {
      return { kind: 'threw', error };
    }
  })();
  try {
    return await Promise.race([finished, timedOut]);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  }
}

function observationText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
