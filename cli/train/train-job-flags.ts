// `edgerl train`'s flags that are not trainer config: the schedule, the store and the compute backend.
// Documented like the config's fields, so the usage text and the parser come from one table.
import { z } from 'zod';
import { backendNames, backendPreference } from '../../model/backend-names.ts';
import { configFields, documented } from '../../protocol/config-docs.ts';
import { storeFlagFields } from '../flags/store-flags.ts';

const schedule = 'Schedule';
const where = 'Where';

export const trainJobSchema = z.strictObject({
  once: documented(z.boolean().optional(), {
    doc: 'one cycle, then exit',
    flagDoc: 'one cycle, then exit (the default)',
    flag: 'once',
    sets: true,
    section: schedule,
  }),
  every: documented(z.string().optional(), {
    doc: 'a cycle every 30s / 15m / 1h until SIGINT or SIGTERM',
    flag: 'every',
    arg: 'DURATION',
    section: schedule,
  }),
  json: documented(z.boolean().optional(), {
    doc: 'one JSON object per cycle on stdout',
    flagDoc:
      'one JSON object per cycle on stdout (JSON lines with --every and --continuous): its kind, the groups claimed, the version published, or why none was; an idle --once adds the complete groups it may not claim, by reason',
    flag: 'json',
    sets: true,
    section: schedule,
  }),
  ...storeFlagFields(where),
  backend: documented(z.string().optional(), {
    doc: `compute backend: ${backendNames.join(' | ')}`,
    shownDefault: `the first available of ${backendPreference.join(' → ')}`,
    flag: 'backend',
    arg: 'NAME',
    env: 'EDGERL_BACKEND',
    section: where,
  }),
});

export type TrainJobFlags = z.output<typeof trainJobSchema>;
export const trainJobFields = configFields(trainJobSchema);
