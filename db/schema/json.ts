// zod schemas for the JSON columns, so that what the store validates on the way in and the type
// drizzle gives back on the way out are the same declaration.
import { z } from 'zod';

/** Free-form annotations on a row: a JSON object. */
export const metadataSchema = z.record(z.string(), z.unknown());
export type Metadata = z.infer<typeof metadataSchema>;

/** Any JSON value (a task's input is whatever its environment needs). */
export const jsonValueSchema = z.json();
export type JsonValue = z.infer<typeof jsonValueSchema>;

/** Training-step metrics, keyed with `/` (`reward/mean`, `kl/mean`); finite numbers only. */
export const metricsSchema = z.record(z.string().min(1), z.number());
export type Metrics = z.infer<typeof metricsSchema>;
