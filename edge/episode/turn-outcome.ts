// How a turn ends. The loop is a state machine over these; only `continue` asks the policy again.

export type TruncationReason = 'turn-limit' | 'max-tokens';

export type TurnOutcome =
  | { readonly kind: 'continue' }
  | { readonly kind: 'final'; readonly answer: string }
  | { readonly kind: 'truncated'; readonly reason: TruncationReason }
  | { readonly kind: 'error'; readonly reason: string };

/** An outcome that ends the episode. */
export type EndOutcome = Exclude<TurnOutcome, { readonly kind: 'continue' }>;
