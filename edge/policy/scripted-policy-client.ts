// A test double for PolicyClient: answers from a script, records every request, and fails loudly
// on a call the script did not expect. Reusable by any test or dry run that needs a fake model.
import type { AssistantMessage } from '../../protocol/chat.ts';
import type { PolicyClient, PolicyRequest, PolicyResponse } from './policy-client.ts';

/** One scripted answer: a response, an error to throw, or a function of the request. */
export type ScriptedStep = PolicyResponse | Error | ((request: PolicyRequest) => PolicyResponse | Error);

export class ScriptedPolicyClient implements PolicyClient {
  readonly requests: PolicyRequest[] = [];
  readonly #steps: ScriptedStep[];
  #unexpected = 0;

  constructor(steps: readonly ScriptedStep[]) {
    this.#steps = [...steps];
  }

  async complete(request: PolicyRequest): Promise<PolicyResponse> {
    this.requests.push(request);
    const step = this.#steps.shift();
    if (step === undefined) {
      this.#unexpected += 1;
      throw new Error(`ScriptedPolicyClient: unexpected call ${this.requests.length}; the script is used up`);
    }
    const answer = typeof step === 'function' ? step(request) : step;
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /** Throws unless every step was used and no call came after the last. */
  assertDone(): void {
    if (this.#unexpected > 0) throw new Error(`ScriptedPolicyClient: ${this.#unexpected} unexpected call(s)`);
    if (this.#steps.length > 0)
      throw new Error(`ScriptedPolicyClient: ${this.#steps.length} step(s) never used`);
  }
}

const scriptedServedBy = 'scripted';

/** A reply with text only (a final answer). */
export function textReply(content: string, extra: Partial<PolicyResponse> = {}): PolicyResponse {
  return {
    message: { role: 'assistant', content },
    finishReason: 'stop',
    servedBy: scriptedServedBy,
    latencyMs: 0,
    ...extra,
  };
}

export interface ScriptedCall {
  readonly name: string;
  /** An object is JSON-encoded; a string is sent as is (to script malformed JSON). */
  readonly arguments: string | Record<string, unknown>;
  readonly id?: string;
}

/** A reply that calls tools. Without an id, the call carries an empty one, as some endpoints send. */
export function toolCallReply(
  calls: readonly ScriptedCall[],
  extra: Partial<PolicyResponse> = {},
): PolicyResponse {
  const message: AssistantMessage = {
    role: 'assistant',
    content: null,
    tool_calls: calls.map((call) => ({
      id: call.id ?? '',
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      },
    })),
  };
  return { message, finishReason: 'tool_calls', servedBy: scriptedServedBy, latencyMs: 0, ...extra };
}
