// What a rollout records in each trajectory's metadata so that whichever worker picks up the queued
// message can run the episode without the original request: the slot and the sampling settings (the
// route, with the model to ask for, is recorded beside them by edge/routing/route.ts).
import { z } from 'zod';
import { samplingSettingsSchema } from '../policy/sampling-settings.ts';

export const rolloutMetadataSchema = z.object({
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
