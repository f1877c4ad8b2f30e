// When an episode stops, as small predicates over the turn that just ended. The first rule that
// returns an outcome wins; none means `continue`.
import type { PolicyResponse } from '../policy/policy-client.ts';
import type { TurnOutcome } from './turn-outcome.ts';

export interface TurnState {
  /** Assistant turns taken so far, this one included. */
  readonly assistantTurns: number;
  readonly maxTurns: number;
  readonly response: PolicyResponse;
}

export type StopRule = (state: TurnState) => TurnOutcome | undefined;

function hasToolCalls(response: PolicyResponse): boolean {
  return (response.message.tool_calls?.length ?? 0) > 0;
}

/** A reply without tool calls ends the episode; if the token limit cut it off, it is not a real answer. */
export const stopOnAnswer: StopRule = ({ response }) => {
  if (hasToolCalls(response)) return undefined;
  return response.finishReason === 'length'
    ? { kind: 'truncated', reason: 'max-tokens' }
    : { kind: 'final', answer: response.message.content ?? '' };
};

/** The environment's turn limit: its tools have run, but the model gets no further turn. */
export const stopAtTurnLimit: StopRule = ({ assistantTurns, maxTurns }) =>
  assistantTurns >= maxTurns ? { kind: 'truncated', reason: 'turn-limit' } : undefined;

export const defaultStopRules: readonly StopRule[] = [stopOnAnswer, stopAtTurnLimit];

export function firstStop(rules: readonly StopRule[], state: TurnState): TurnOutcome {
  for (const rule of rules) {
    const outcome = rule(state);
    if (outcome) return outcome;
  }
  return { kind: 'continue' };
}
