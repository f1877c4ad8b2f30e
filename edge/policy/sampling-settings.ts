// Sampling settings: one shape from the request body (POST /v1/rollouts `settings`) through the
// rollout's metadata and the episode loop to the policy call. The OpenAI field names
// (`max_completion_tokens`) appear only where the policy client writes its request body.
import { z } from 'zod';

/** What a request may ask for; the episode loop's defaults (episode-defaults.ts) fill the rest. */
export const samplingSettingsSchema = z.object({
  /** OpenAI's range for `temperature`. */
  temperature: z.number().min(0).max(2).optional(),
  /** Completion tokens per turn. */
  maxTokens: z.number().int().min(1).max(32_768).optional(),
  /** Turn n of an episode is sent `seed + n`, so its turns do not repeat one draw. */
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
});
export type SamplingSettings = z.infer<typeof samplingSettingsSchema>;

/** The same settings with the defaults filled in: what one policy call is sent. */
export type Sampling = Required<Omit<SamplingSettings, 'seed'>> & Pick<SamplingSettings, 'seed'>;
