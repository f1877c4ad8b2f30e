// Content hashes for RULER: the rubric's hash (stored with every score, so scores made under different
// rubrics can be told apart) and the group's cache key. SHA-256 through WebCrypto, which Node ≥ 20 and
// Cloudflare Workers both provide as `crypto.subtle`; no Node imports.
import type { ToolSpec } from '../../protocol/chat.ts';
import { canonicalJson } from '../../protocol/canonical-json.ts';
import type { JudgeTrajectory } from './judge-group.ts';

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function rubricHash(rubric: string): Promise<string> {
  return sha256Hex(rubric.trim());
}

export interface GroupHashInput {
  readonly judgeModel: string;
  readonly rubricHash: string;
  /** Everything else that changes the judge's answer: prompt version, orderings, seed, temperature. */
  readonly settings: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly tools?: readonly ToolSpec[];
  readonly trajectories: readonly JudgeTrajectory[];
}

/**
 * The cache key of a judging: equal for the same judge, rubric, settings, tools and trajectories
 * (ids and messages), whatever the order of the trajectories in the input or of keys in the JSON.
 */
export function groupHash(input: GroupHashInput): Promise<string> {
  const trajectories = [...input.trajectories]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((trajectory) => ({ id: trajectory.id, messages: trajectory.messages }));
  return sha256Hex(
    canonicalJson({
      kind: 'edgerl/ruler-group',
      judgeModel: input.judgeModel,
      rubricHash: input.rubricHash,
      settings: input.settings,
      tools: input.tools ?? [],
      trajectories,
    }),
  );
}
