// Adds up what the judge calls of one group cost: tokens the endpoint reported, how many calls did not
// report any (so the sum is a lower bound), and the price estimate. Pure.
import type { TokenUsage } from './judge-client.ts';

export interface UsageTally {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Calls that reached the judge but reported no usage (timeouts, endpoints without `usage`). */
  readonly unreportedCalls: number;
}

export const emptyUsage: UsageTally = { promptTokens: 0, completionTokens: 0, unreportedCalls: 0 };

export function addUsage(tally: UsageTally, usage: TokenUsage | undefined): UsageTally {
  if (!usage) return { ...tally, unreportedCalls: tally.unreportedCalls + 1 };
  return {
    promptTokens: tally.promptTokens + usage.promptTokens,
    completionTokens: tally.completionTokens + usage.completionTokens,
    unreportedCalls: tally.unreportedCalls,
  };
}

export function sumUsage(tallies: readonly UsageTally[]): UsageTally {
  return tallies.reduce(
    (sum, tally) => ({
      promptTokens: sum.promptTokens + tally.promptTokens,
      completionTokens: sum.completionTokens + tally.completionTokens,
      unreportedCalls: sum.unreportedCalls + tally.unreportedCalls,
    }),
    emptyUsage,
  );
}

export interface TokenPrices {
  /** USD per million prompt tokens. */
  readonly pricePromptPerMillion?: number;
  /** USD per million completion tokens. */
  readonly priceCompletionPerMillion?: number;
}

/** USD for the reported tokens, or undefined when no price is configured. */
export function estimateCostUsd(tally: UsageTally, prices: TokenPrices): number | undefined {
  const { pricePromptPerMillion: prompt, priceCompletionPerMillion: completion } = prices;
  if (prompt === undefined || completion === undefined) return undefined;
  return (tally.promptTokens * prompt + tally.completionTokens * completion) / 1_000_000;
}
