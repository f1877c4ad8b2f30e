// How a long-running trainer (`--continuous`, `--every`) rides out a store it cannot reach: the zod
// slice of the train config. The backoff is protocol/openai/retry-policy.ts's (doubling, a cap, full
// jitter); the loop that waits is wait-out-store.ts. `--once` does not wait: cron runs it again.
import { z } from 'zod';
import { documented } from '../../protocol/config-docs.ts';
import { numberWhere } from '../../protocol/config-fields.ts';

const section = 'Leases and checkpoints';
const source =
  'doubling with a cap and full jitter (M. Brooker, "Exponential Backoff And Jitter", AWS, 2015)';

export const storeWaitSettingsSchema = z
  .strictObject({
    retrySeconds: documented(
      numberWhere((seconds) => seconds > 0 && seconds <= 3600, 'between 0 (excluded) and 3600').default(1),
      {
        doc: 'cap of the first wait after the store proves unreachable (--continuous, --every), seconds; doubles with each failed try',
        source,
        flag: 'store-retry-seconds',
        arg: 'S',
        section,
      },
    ),
    retryCapSeconds: documented(
      numberWhere((seconds) => seconds > 0 && seconds <= 3600, 'between 0 (excluded) and 3600').default(30),
      {
        doc: 'longest wait between tries of an unreachable store, seconds; short enough that training resumes soon after a restart',
        source: 'an edgerl choice: a Postgres restart or failover takes seconds to a minute',
        flag: 'store-retry-cap-seconds',
        arg: 'S',
        section,
      },
    ),
    maxWaitSeconds: documented(
      numberWhere((seconds) => seconds > 0, 'a positive number of seconds')
        .nullable()
        .default(null),
      {
        doc: 'give up after the store has been unreachable this long, seconds: the run ends interrupted and the trainer exits 1',
        shownDefault: 'none (wait until SIGINT or SIGTERM)',
        flag: 'max-store-wait',
        arg: 'S',
        section,
      },
    ),
    graceSeconds: documented(
      numberWhere((seconds) => seconds >= 0 && seconds <= 600, 'between 0 and 600').default(5),
      {
        doc: 'at exit, how long ending the runs and giving the leases back keeps retrying an unreachable store, seconds',
        source: "an edgerl choice: inside `docker stop`'s default 10 s before SIGKILL",
        flag: 'store-grace-seconds',
        arg: 'S',
        section,
      },
    ),
  })
  .prefault({});

export type StoreWaitSettings = z.output<typeof storeWaitSettingsSchema>;
