// Every typed error class of every package carries a stable kebab-case `code` (issue 15's one error
// vocabulary); the classes with several codes are checked over their whole closed list.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/command.ts';
import { DemoConfigError } from '../../cli/demo/demo-config.ts';
import { DemoStopped } from '../../cli/demo/stop-signal.ts';
import { storeErrorCodes, StoreError } from '../../db/errors.ts';
import { EdgeConfigError } from '../../edge/edge-config.ts';
import { ToolRefusal } from '../../edge/environments/tool-refusal.ts';
import { EpisodeSetupError, episodeSetupErrorCodes } from '../../edge/episode/episode-setup-error.ts';
import { ApiError, apiErrorCodes } from '../../edge/http/api-error.ts';
import { EpisodeInterrupted } from '../../edge/rollouts/run-queued-episode.ts';
import { BackendError } from '../../model/backend.ts';
import { ModelConfigError } from '../../model/hf-config.ts';
import { CheckpointError } from '../../model/load-weights.ts';
import { LoraConfigError } from '../../model/lora.ts';
import { PeftAdapterError } from '../../model/peft-adapter.ts';
import { AdapterError } from '../../model/policy-model.ts';
import { SafetensorsError } from '../../model/safetensors.ts';
import { TemplatePrefixError } from '../../model/tokenizer/render-for-training.ts';
import { Utf8Error } from '../../protocol/decode-utf8.ts';
import { StoredTextError } from '../../protocol/stored-text.ts';
import { ServeConfigError } from '../../serve/serve-config.ts';
import { ServeError, serveErrorCodes } from '../../serve/serve-error.ts';
import { LossConfigError } from '../../trainer/grpo/loss-config.ts';
import { RulerConfigError } from '../../trainer/ruler/ruler-config.ts';
import { RulerInputError } from '../../trainer/ruler/score-group.ts';
import { LeaseLostError } from '../../trainer/train/lease-keeper.ts';
import { TrainerBusyError } from '../../trainer/train/output-lock.ts';
import { TrainConfigError } from '../../trainer/train/train-config.ts';
import { StoreWaitExceededError } from '../../trainer/train/wait-out-store.ts';

const kebab = /^[a-z]+(?:-[a-z]+)*$/;

describe('error codes', () => {
  it('every typed error has a kebab-case code', () => {
    const errors: Error[] = [
      new UsageError('x'),
      new DemoStopped(),
      new DemoConfigError([]),
      new EdgeConfigError([]),
      new ToolRefusal('x'),
      new EpisodeInterrupted('x'),
      new ModelConfigError('x'),
      new CheckpointError('x'),
      new LoraConfigError('x'),
      new PeftAdapterError('x'),
      new AdapterError('x'),
      new SafetensorsError('x'),
      new TemplatePrefixError(0, 'x'),
      new ServeConfigError([]),
      new LossConfigError([]),
      new RulerConfigError('x'),
      new RulerInputError('x'),
      new LeaseLostError('x'),
      new TrainerBusyError('x'),
      new TrainConfigError([]),
      new StoreWaitExceededError('x'),
      new StoredTextError('x'),
      new Utf8Error(0),
      ...(['unknown-backend', 'backend-unavailable'] as const).map((code) => new BackendError(code, 'x')),
      ...storeErrorCodes.map((code) => new StoreError(code, 'x')),
      ...episodeSetupErrorCodes.map((code) => new EpisodeSetupError(code, 'x')),
      ...Object.keys(apiErrorCodes).map((code) => new ApiError(code as keyof typeof apiErrorCodes, 'x')),
      ...Object.keys(serveErrorCodes).map(
        (code) => new ServeError(code as keyof typeof serveErrorCodes, 'x'),
      ),
    ];
    for (const error of errors) {
      const { code } = error as Error & { code?: unknown };
      expect(typeof code === 'string' && kebab.test(code), `${error.name}: ${String(code)}`).toBe(true);
    }
  });
});
