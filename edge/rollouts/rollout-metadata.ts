// What a rollout records in each trajectory's metadata so that whichever worker picks up the queued
// message can run the episode without the original request: the model to ask for, the routing
// outcome, and the sampling settings.
import { z } from 'zod';

export const samplingSettingsSchema = z.object({
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(32_768).optional(),
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
});
export type SamplingSettings = z.infer<typeof samplingSettingsSchema>;

export const rolloutMetadataSchema = z.object({
  /** The served model or adapter name the episode's requests carry. */
  model: z.string().min(1),
  /** The experiment arm's name, when an experiment routed the group. */
  arm: z.string().optional(),
  /** Position of the trajectory in its group, from 0. */
  slot: z.number().int().min(0),
  settings: samplingSettingsSchema.default({}),
});
export type RolloutMetadata = z.infer<typeof rolloutMetadataSchema>;

/**
 * Slot k of a group samples with seed + 1000·k when the request fixes a seed, so the group's
 * members do not repeat one draw (turn n then adds n, see episode-defaults.ts).
 */
export function slotSeed(seed: number | undefined, slot: number): number | undefined {
  return seed === undefined ? undefined : (seed + 1000 * slot) % 2 ** 31;
}
