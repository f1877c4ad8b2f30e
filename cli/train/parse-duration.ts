// `--every`'s durations: `30s`, `15m`, `1h`, `500ms`, at least one second.
import { UsageError } from '../command.ts';

const durationUnits = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!match) throw new UsageError(`--every must be a duration such as 30s, 15m or 1h, got "${text}"`);
  const ms = Number(match[1]) * durationUnits[match[2] as keyof typeof durationUnits];
  if (!(ms >= 1000)) throw new UsageError(`--every must be at least 1s, got "${text}"`);
  return ms;
}
