// The tfjs engine of a trainer, for tests that look inside it (its adapter's variables, its optimiser,
// its gradient workers). Fails on another engine. Test-only.
import { TfjsEngine } from '../../../trainer/engine/tfjs/tfjs-engine.ts';
import type { Trainer } from '../../../trainer/train/trainer.ts';

export function tfjsEngineOf(trainer: Trainer): TfjsEngine {
  const { engine } = trainer.session;
  if (!(engine instanceof TfjsEngine))
    throw new Error(`this test reads the tfjs engine's state; the trainer runs ${engine.kind}`);
  return engine;
}
