// Runs one request's choices on the engine: n sequences per prompt (choice i seeded with seed + i),
// each with its SequenceOutput for stop rules and text, and one channel of updates that the route
// turns into a response or an SSE stream. An engine failure fails the whole request; a client that
// goes away ends its sequences at the next step.
import type { ChatTokenizer } from '../model/tokenizer/index.ts';
import { type Channel, createChannel } from './channel.ts';
import type { EngineSequence, ServeEngine } from './engine.ts';
import { constraintFor } from './guided-vocabulary.ts';
import type { SampledToken } from './row-sampler.ts';
import type { GenerationSettings } from './sampling-fields.ts';
import { SequenceOutput } from './sequence-output.ts';

export interface ChoicePrompt {
  readonly promptIds: readonly number[];
  readonly maxTokens: number;
}

export interface ChoiceRun {
  /** OpenAI's choice index: prompt-major, n per prompt. */
  readonly index: number;
  readonly promptIndex: number;
  readonly output: SequenceOutput;
}

export interface ChoiceUpdate {
  readonly index: number;
  /** Tokens sampled since the previous update of this choice (0 or 1). */
  readonly tokens: readonly SampledToken[];
  /** Text those tokens made final. */
  readonly delta: string;
  readonly finished: boolean;
}

export interface RunChoicesInput {
  readonly model: string | undefined;
  readonly prompts: readonly ChoicePrompt[];
  readonly settings: GenerationSettings;
  readonly signal?: AbortSignal;
}

export function runChoices(
  engine: ServeEngine,
  tokenizer: ChatTokenizer,
  vocabSize: number,
  input: RunChoicesInput,
): { choices: ChoiceRun[]; updates: Channel<ChoiceUpdate> } {
  const { settings } = input;
  const updates = createChannel<ChoiceUpdate>();
  const eosTokenIds = settings.ignoreEos ? [] : tokenizer.eosTokenIds;
  // Guided decoding: the output may end on any token that stops it.
  const constraint = settings.guided
    ? constraintFor(tokenizer, vocabSize, settings.guided, [...eosTokenIds, ...settings.stopTokenIds])
    : undefined;
  const decode = (ids: readonly number[]) =>
    tokenizer.decode(ids, { skipSpecialTokens: settings.skipSpecialTokens });
  const choices: ChoiceRun[] = [];
  const sequences: EngineSequence[] = [];
  let open = 0;
  const settle = () => {
    open -= 1;
    if (open === 0) updates.close();
  };
  input.prompts.forEach((prompt, promptIndex) => {
    for (let i = 0; i < settings.n; i++) {
      const index = promptIndex * settings.n + i;
      const output = new SequenceOutput(decode, {
        eosTokenIds,
        stopTokenIds: settings.stopTokenIds,
        stopStrings: settings.stopStrings,
        includeStopStrInOutput: settings.includeStopStrInOutput,
        maxTokens: prompt.maxTokens,
      });
      const guide = constraint?.sequence();
      choices.push({ index, promptIndex, output });
      open += 1;
      sequences.push({
        promptIds: prompt.promptIds,
        sampling: {
          sampling: settings.sampling,
          topLogprobs: settings.topLogprobs,
          logitBias: settings.logitBias,
        },
        seed: settings.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : settings.seed + i,
        allowedTokenIds: guide ? () => guide.allowed() : undefined,
        onToken(token) {
          guide?.advance(token.tokenId);
          let { delta, finished } = output.accept(token);
          // A complete guided output with no stop token to end on (ignore_eos) ends here.
          if (!finished && guide && guide.allowed().length === 0) {
            delta += output.finish('stop');
            finished = true;
          }
          updates.push({ index, tokens: [token], delta, finished });
          if (finished) settle();
          return finished;
        },
        onEnd(end) {
          if (end.kind === 'error') {
            updates.fail(end.error);
            return;
          }
          const delta = output.finish(end.kind);
          updates.push({ index, tokens: [], delta, finished: true });
          settle();
        },
      });
    }
  });
  engine.submit(input.model, sequences, input.signal);
  return { choices, updates };
}
