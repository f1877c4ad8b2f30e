// The RULER judge of `edgerl train`, from the EDGERL_JUDGE_* variables; a missing judge says how to train
// without one.
import { errorMessage } from '../../protocol/error-message.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { createMemoryRulerCache } from '../../trainer/ruler/ruler-cache.ts';
import { rulerConfigFromEnv } from '../../trainer/ruler/ruler-config.ts';
import { UsageError } from '../command.ts';

export function judgeFromEnv(env: NodeJS.ProcessEnv) {
  let config: ReturnType<typeof rulerConfigFromEnv>;
  try {
    config = rulerConfigFromEnv(env);
  } catch (error) {
    throw new UsageError(`${errorMessage(error)} (or train with --reward verifier)`);
  }
  return { config, client: createJudgeClient(config), cache: createMemoryRulerCache() };
}
