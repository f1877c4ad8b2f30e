// The argv of a small, fast `edgerl train --once` on policy `agent` with the tiny model and the
// verifier's rewards, as the process tests spawn it, on the test engine (EDGERL_TEST_ENGINE); the store
// flags are the caller's. Test-only.
import { testEngineArgs } from '../../support/test-engine.ts';

export function trainOnceArgs(options: {
  readonly modelDir: string;
  readonly inferenceUrl: string;
  readonly outputDir: string;
  /** `['--data-dir', dir]` or `['--database-url', url]`, and any further flags. */
  readonly extra: readonly string[];
}): string[] {
  return [
    'bin/edgerl.js',
    'train',
    '--once',
    '--policy',
    'agent',
    '--model',
    options.modelDir,
    '--inference-url',
    options.inferenceUrl,
    '--output-dir',
    options.outputDir,
    '--reward',
    'verifier',
    '--lr',
    '0.005',
    '--lora-rank',
    '4',
    '--lora-targets',
    'q_proj,v_proj',
    ...testEngineArgs(),
    ...options.extra,
  ];
}
