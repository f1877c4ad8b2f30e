// The demo's one typed config as a zod schema: sizes of every phase, sampling, learning rates, where
// its files go, and the `--quick` preset the tests use. Each default is written once below with its
// meaning, flag and where it comes from; the CLI's flags and usage derive from it (cli/commands/demo.ts).
// Where the files go under --data-dir is demo-paths.ts.
import { join } from 'node:path';
import { z } from 'zod';
import { loraInitAs } from '../../model/lora-init-a.ts';
import { engineKinds } from '../../trainer/engine/train-engine.ts';
import { defaultFleetChecks } from '../../trainer/train/inference-endpoint.ts';
import { lrScheduleKinds } from '../../trainer/train/lr-schedule-settings.ts';
import { documented, type FieldDoc, parseConfig } from '../../protocol/config-docs.ts';
import { ConfigError } from '../../protocol/config-error.ts';
import { intBetween, numberWhere, oneOf } from '../../protocol/config-fields.ts';

/** `--quick`: every phase once, tiny sizes (a minute or two on 2 cores); explicit flags still win. */
export const quickOverrides = {
  sftDemonstrations: 8,
  sftEpochs: 1,
  sftBatch: 8,
  sftProbe: 4,
  rounds: 1,
  groupsPerRound: 2,
  groupSize: 2,
  evalPerArm: 3,
  validationTasks: 2,
  concurrency: 4,
} as const;

/** A size `--quick` overrides: the usage shows both, from the schema's default and `quickOverrides`. */
function quickSized<T extends z.ZodDefault<z.ZodType<number>>>(
  key: keyof typeof quickOverrides,
  schema: T,
  doc: FieldDoc,
): T {
  return documented(schema, {
    ...doc,
    shownDefault: `${schema.def.defaultValue}; --quick ${quickOverrides[key]}`,
  });
}
const inOpenUnit = () => numberWhere((value) => value > 0 && value < 1, 'in (0, 1)');
const switchFlag = (flag: string, doc: string) =>
  documented(z.boolean().default(false), { doc, flag, sets: true });

/*
 * Sizes for a 2-core CPU, after the learning probe (research notes): a 2-layer width-64 model went
 * 34% → 75% sampled success in 40 GRPO steps of 16 tasks × 8 episodes; chat-format episodes here are
 * ~200–300 tokens (about 60 of them the assistant's; ~10× the probe's), so groups and rounds are
 * trimmed. Not enough yet: see the README's demo status.
 */
export const demoConfigSchema = z.strictObject({
  /** The test-sized run: proves the loop, not the learning. */
  quick: switchFlag('quick', 'the test-sized run (every phase once, tiny sizes)'),
  /** Delete `dataDir` first instead of reusing what a previous run left. */
  fresh: switchFlag('fresh', 'delete --data-dir first'),
  /** Phase 3 overlapped (async-rounds.ts): the same rollouts and steps, trained while they run. */
  async: switchFlag(
    'async',
    'RL with rollouts and training overlapped: groups keep rolling out with the newest version while the trainer trains on complete ones (edgerl train --continuous)',
  ),
  /** Stop once the warm start is published: RL settings then compared from one start (bench:learn). */
  warmStartOnly: switchFlag(
    'warm-start-only',
    'stop once the warm start is published; a later run on the same --data-dir continues with RL from it',
  ),
  /** Print the summary as JSON on stdout (progress still goes to stderr). */
  json: switchFlag('json', 'print the summary as JSON on stdout (progress goes to stderr)'),
  /** A third A/B arm for the newest version when the one that ships is another (bench:learn sets it). */
  evalLast: switchFlag(
    'eval-last',
    'also evaluate the last version in the A/B when the one that ships is an earlier one',
  ),
  /** Everything the demo writes: model, store, checkpoints, adapters, the console export. */
  dataDir: documented(
    z
      .string()
      .refine((dir) => dir.trim() !== '', { error: 'must name a directory' })
      .default(join('.edgerl', 'demo')),
    { doc: 'where everything goes', flag: 'data-dir', arg: 'DIR' },
  ),
  /** Seeds the model's weights, the LoRA init, task sampling and every episode's sampling. */
  seed: documented(intBetween(0, 2 ** 31 - 1).default(1), {
    doc: 'seed of weights, tasks and sampling',
    flag: 'seed',
    arg: 'N',
  }),
  /** TensorFlow.js backend; undefined: the first available. */
  backend: documented(z.string().optional(), {
    doc: 'TensorFlow.js backend',
    shownDefault: 'the first available',
    env: 'EDGERL_BACKEND',
  }),
  /** Data-parallel gradient workers of both training phases (trainer/train/workers/). */
  workers: documented(intBetween(0, 256).default(0), {
    doc: 'gradient worker threads of the warm start and the RL steps (`edgerl train --workers`)',
    shownDefault: '0: one per core on wasm and cpu, 1 on GPU backends',
    flag: 'workers',
    arg: 'N',
  }),
  /** Where both training phases' tensor work runs (trainer/engine/). */
  engine: documented(oneOf(engineKinds).default('tfjs'), {
    doc: "the trainer's engine (`edgerl train --engine`): tfjs in this process, or torch (PyTorch in a Python child; `npm run setup:torch` first)",
    flag: 'engine',
    arg: 'NAME',
  }),
  torchPython: documented(z.string().optional(), {
    doc: 'with --engine torch: the Python that has torch, transformers and peft (`edgerl train --torch-python`)',
    shownDefault: "the repository's .venv-torch/",
    flag: 'torch-python',
    arg: 'PATH',
    env: 'EDGERL_TORCH_PYTHON',
  }),
  /** The tiny preset (2 layers, width 64): the probe's size, and the only one fast enough on 2 cores. */
  preset: documented(oneOf(['tiny', 'small']).default('tiny'), {
    doc: 'model size (`edgerl model init --preset`)',
    flag: 'preset',
    arg: 'NAME',
  }),
  /*
   * The base stays frozen (only the LoRA adapter trains), and a logit is at most √D·|e| = D·std
   * (the final RMSNorm output has norm √D): transformers' 0.02 caps logits near 1.3 at D = 64, and
   * the warm start's per-token loss stalled near chance (6.28 → 5.5). 0.2 allows logits near 13;
   * measured: loss 6.7 → 1.0 in 40 steps of 4 demonstrations, where 0.02 reached 5.4 in 20 of 8.
   */
  embeddingStd: documented(numberWhere((value) => value > 0 && value <= 10, 'in (0, 10]').default(0.2), {
    doc: "std of the random model's token embedding (tied lm_head)",
    flag: 'embedding-std',
    arg: 'X',
  }),
  /*
   * Rank = hidden size (64 on tiny): every projection can take a full-rank update, the nearest a
   * LoRA gets to training the random base's weights. alpha = 2·r (scale 2), a common LoRA choice.
   */
  loraRank: documented(intBetween(1, 4096).default(64), {
    doc: 'LoRA rank on all seven projections, alpha = 2·rank',
    flag: 'lora-rank',
    arg: 'N',
  }),
  /*
   * Orthogonal A, frozen: training B is then full fine-tuning of each projection in a rotated basis.
   * Measured in a PyTorch replica of the warm start (same model, tokens and optimiser), key-copy
   * accuracy: with PEFT's kaiming-uniform A, trained, at lr 1e-3 it stayed at chance until step 250
   * and reached 97% by step 400 in one seed, 63% by step 500 in another; at 5e-4 it was still at chance
   * at step 400, at 3e-3 (RoPE θ 1e4) at step 200; with orthogonal A, trained, at chance at step 200;
   * with orthogonal A frozen, 86% at step 150 and 100% at 200, as fast as training every weight.
   */
  loraInitA: documented(oneOf(loraInitAs).default('orthogonal'), {
    doc: "how the adapter's A starts",
    flag: 'lora-init-a',
    arg: 'NAME',
  }),
  /** Whether A trains too (false: LoRA-FA, B alone). */
  loraTrainA: documented(z.boolean().default(false), {
    doc: "train LoRA's A too",
    flagDoc: "train LoRA's A too (default: A frozen, B alone trains)",
    flag: 'lora-train-a',
    sets: true,
  }),
  /*
   * The warm start's cap: 19,200 × 1 / 8 = 2,400 steps; it stops sooner, once the copy probe passes
   * (sftStopAt). Copying keys and values from tool results into the next message is a phase change
   * whose step varies with the seed, from ~500 to past 1,900: a fixed 800 steps (the earlier default)
   * missed a copy on seeds 2, 3 and 4, and RL did not find it from rewards (docs/demo.md). With 12,800
   * demonstrations seeds 1–8 stopped at 825–1,475 steps except 5 and 7, which reached that 1,600-step cap
   * without the value copy (+19 and +12 points after RL); with this count seed 5 passed at ~1,975 and
   * seed 7 at 475 (the count also reorders the shuffled demonstrations, trainer/train/sft.ts).
   */
  sftDemonstrations: quickSized('sftDemonstrations', intBetween(1, 100_000).default(19_200), {
    doc: 'scripted demonstrations for the warm start (distinct training tasks)',
    flag: 'sft-demos',
    arg: 'N',
  }),
  /*
   * How often the scripted solver gives up at once (answers `?`) instead of looking up (0: never).
   * The start should speak the format but not solve reliably (the issue): imitating a demonstrator
   * that gives up at once on half the tasks gives that, and leaves every other demonstration whole.
   */
  demonstrationGiveUpRate: documented(
    numberWhere((value) => value >= 0 && value < 1, 'in [0, 1)').default(0.5),
    { doc: 'how often a demonstration quits at once (answers ?)', flag: 'give-up-rate', arg: 'X' },
  ),
  /*
   * Teacher-forced copy accuracy on held-out solved demonstrations (cli/demo/copy-probe.ts), read every
   * 25 steps: the warm start's evidence that it learned to copy keys and values (a phase change whose
   * step varies with the seed, docs/demo.md). 60 demonstrations, six per answer digit, hold 60 start
   * keys, ~90 next keys and 60 values: chance (1 in 8, 1 in 10) and a learned copy are far apart, and
   * the stop rule reads each digit from six answers (48 in seed order held one digit three times).
   */
  sftProbe: quickSized('sftProbe', intBetween(0, 10_000).default(60), {
    doc: 'held-out demonstrations of the copy probe, read every 25 warm-start steps (0: none)',
    flag: 'sft-probe',
    arg: 'N',
  }),
  /**
   * The warm start stops once every copy kind reaches this on the probe (above 1: it runs every step):
   * it runs until its evidence says the copies are learned, however many steps this seed needs, up to
   * sftDemonstrations' cap. Not 1: a 48-demonstration probe reads a miss or two shortly before 100%. Not
   * 0.9: values are ten digits, and one digit never copied costs about a tenth of the value reading, so
   * 0.9 passed seed 3 at 94% with "0" copied as "9", which its RL then ended on (6 of 8 sampled eval
   * failures; docs/demo.md, session 8). 0.95 refuses that (≈ 90%) and still allows two misses in 48.
   * Each kind's weakest symbol (key letter or digit) must reach it too (copyReached): 0.95 passed
   * seed 1 at 96% value copy with the digit 1 copied 7 times in 18 (session 9).
   */
  sftStopAt: documented(numberWhere((value) => value > 0 && value <= 2, 'in (0, 2]').default(0.95), {
    doc: 'stop the warm start once start key, next key, value and answer end, and the weakest key or digit of each, all reach this share on the probe (above 1: run every step)',
    flag: 'sft-stop-at',
    arg: 'X',
  }),
  /*
   * The warm start also stops only while the probe's probability of giving up at once is within this of
   * --give-up-rate: the start is meant to imitate its demonstrator, quits included, so RL has the quits
   * to turn into lookups. At batch 8 and lr 3e-3 that one decision random-walks: seed 1's start read
   * 37% at step 625 and 10% at 650 (success at 0.7: 27% and 93%, which left RL nothing to gain; session
   * 9, docs/demo.md). Above 1: not checked.
   */
  sftQuitWithin: documented(numberWhere((value) => value > 0 && value <= 2, 'in (0, 2]').default(0.15), {
    doc: "stop the warm start only while its probe's give-up probability is within this of --give-up-rate (above 1: not checked)",
    flag: 'sft-quit-within',
    arg: 'X',
  }),
  /*
   * The weight of each copied token (a key or value after ` "`, cli/demo/copy-probe.ts) in the warm
   * start's token-mean loss; 1: plain SFT. Three copies among ~43 trained tokens of a solved
   * demonstration otherwise carry ~7% of its loss.
   */
  sftCopyWeight: documented(numberWhere((value) => value > 0 && value <= 100, 'in (0, 100]').default(1), {
    doc: 'loss weight of the key and value tokens the warm start must copy (1: plain SFT)',
    flag: 'sft-copy-weight',
    arg: 'X',
  }),
  sftEpochs: documented(intBetween(1, 1000).default(1), {
    doc: 'passes over the demonstrations',
    flag: 'sft-epochs',
    arg: 'N',
  }),
  sftBatch: documented(intBetween(1, 1024).default(8), {
    doc: 'sequences per SFT optimiser step',
    flag: 'sft-batch',
    arg: 'N',
  }),
  /** With A frozen and orthogonal this is full fine-tuning's rate for B (the replica's 3e-3 run). */
  sftLearningRate: documented(inOpenUnit().default(3e-3), {
    doc: 'SFT learning rate',
    flag: 'sft-lr',
    arg: 'X',
  }),
  /** Measured: see the README's demo status (16 rounds, ~110 s of RL on 2 cores). */
  rounds: quickSized('rounds', intBetween(1, 10_000).default(16), {
    doc: 'RL rounds: each rolls out --groups groups, then one trainer cycle publishes a version',
    flag: 'rounds',
    arg: 'N',
  }),
  /** Half the probe's 16 tasks per step: 64 episodes of ~100–160 tokens a round on 2 cores. */
  groupsPerRound: quickSized('groupsPerRound', intBetween(1, 1024).default(8), {
    doc: 'groups per round',
    flag: 'groups',
    arg: 'N',
  }),
  /** Episodes per task (GRPO's G), the probe's 8; a group of one has no spread, hence no advantage. */
  groupSize: quickSized('groupSize', intBetween(2, 256).default(8), {
    doc: 'episodes per group',
    flag: 'group-size',
    arg: 'N',
  }),
  /** The probe's AdamW rate (LoRA-FA with orthogonal A moves W as full fine-tuning would). */
  rlLearningRate: documented(inOpenUnit().default(1e-3), { doc: 'GRPO learning rate', flag: 'lr', arg: 'X' }),
  /*
   * Stability (docs/demo.md, "What each stability change did"). Off unless the measurements there say
   * otherwise; each is one knob of the trainer or of this loop.
   */
  lrWarmupSteps: documented(intBetween(0, 10_000).default(0), {
    doc: 'GRPO steps (one per round) over which the rate rises linearly to --lr (`edgerl train --lr-warmup-steps`)',
    source: "ART: none; RAdam (arXiv:1908.03265) on why Adam's first steps from fresh moments are large",
    flag: 'lr-warmup',
    arg: 'K',
  }),
  lrSchedule: documented(oneOf(lrScheduleKinds).default('constant'), {
    doc: 'after the warm-up: constant, or cosine decay over --rounds (`edgerl train --lr-schedule`)',
    source: "ART's constant schedule",
    flag: 'lr-schedule',
    arg: 'KIND',
  }),
  /*
   * A group whose episodes all succeed or all fail has no advantage and gives no gradient. DAPO's
   * "dynamic sampling" (arXiv:2503.14476 §3.2) keeps sampling until the batch is full of groups with
   * spread; here, bounded: while fewer than --groups of the round's groups have spread in their verifier
   * rewards, roll out as many more as are missing, at most this many extra in all per round.
   */
  resampleGroups: documented(intBetween(0, 1024).default(0), {
    doc: 'extra groups a round may roll out while fewer than --groups have reward spread (0: none)',
    source: "DAPO's dynamic sampling (arXiv:2503.14476), bounded",
    flag: 'resample-groups',
    arg: 'N',
  }),
  /*
   * RL forgets a copy its rounds stop sampling (docs/demo.md, seed 5: the tasks whose answer is 1 went
   * from 100% to 0 once two rounds drew none). Replay trains each GRPO step on this many past successes
   * too (`edgerl train --replay`), the best episode of earlier groups, so behaviour the round does not
   * sample keeps a gradient. At 16 (of the round's 64 episodes) seed 5's largest rollout fall went from
   * 29.7 points to 3.1 and the other seven seeds kept their gains (docs/demo.md, session 10).
   */
  replay: documented(intBetween(0, 10_000).default(16), {
    doc: 'past successes trained with next-token loss beside each GRPO step (`edgerl train --replay`; 0: none)',
    source: 'self-imitation (arXiv:1806.05635), PPO-ptx (arXiv:2203.02155)',
    flag: 'replay',
    arg: 'N',
  }),
  replayWeight: documented(numberWhere((weight) => weight > 0 && Number.isFinite(weight), '> 0').default(1), {
    doc: 'weight of the replayed next-token loss (`edgerl train --replay-weight`)',
    flag: 'replay-weight',
    arg: 'X',
  }),
  /*
   * Validation episodes per published version, one per validation task (the same tasks and sampling
   * seeds for every version: cli/demo/validate.ts). The A/B then compares the start with the last RL
   * version, or an earlier one whose validation beats it by more than 1.645 standard errors. 32 at ~70%
   * success is a standard error near 8 points: enough to tell a version at 90% from one at 60%, as seed
   * 5's round 13 (94%) from its end (72%) in the issue's measurement.
   */
  validationTasks: quickSized('validationTasks', intBetween(0, 10_000).default(32), {
    doc: 'validation episodes per published version; an earlier version better than the last by them ships (0: the last)',
    flag: 'validation-tasks',
    arg: 'N',
  }),
  /** ≈ 100 per arm gives p < 0.05 for a 20-point gain around 30–50% (two-proportion z-test power ≈ 0.8). */
  evalPerArm: quickSized('evalPerArm', intBetween(2, 100_000).default(100), {
    doc: 'held-out eval episodes per A/B arm (one per eval task)',
    flag: 'eval-per-arm',
    arg: 'N',
  }),
  /*
   * Served with sampling, so evaluated with sampling (the probe's honest evaluation): the temperature
   * a user of the served policy gets, for validation and the A/B. 0.7 rather than 1: the warm-started
   * tiny model's long tail breaks calls mid-JSON at 1 (measured, same warm start and seed: 51 of 100
   * start-arm episodes ended in malformed output at 1, 11 at 0.7). RL rollouts too, unless --rollout-temperature.
   */
  temperature: documented(
    numberWhere((value) => value > 0 && value <= 2, 'in (0, 2] (the demo samples)').default(0.7),
    {
      doc: 'sampling temperature of every rollout, RL (unless --rollout-temperature), validation and eval',
      flag: 'temperature',
      arg: 'T',
    },
  ),
  /*
   * The RL rounds' own sampling temperature; validation and the A/B sample at --temperature. 1.0 (TRL
   * GRPOConfig's default) keeps reward spread where 0.7 loses it (seed 1: 5–8 of 8 groups with spread
   * every round against 0–3 from round 6 on, 92% held-out against 86%), but it did not hold on other
   * seeds: 76% against 90% on seed 2, 84% against 96% on seed 4, the same starts (docs/demo.md, session
   * 8). So RL samples as the policy is served, unless this is set.
   */
  rolloutTemperature: documented(
    numberWhere((value) => value > 0 && value <= 2, 'in (0, 2] (the demo samples)').optional(),
    {
      doc: "sampling temperature of the RL rounds' rollouts only (validation and eval use --temperature)",
      shownDefault: '--temperature',
      source: "TRL GRPOConfig's temperature 1.0 was measured and not kept",
      flag: 'rollout-temperature',
      arg: 'T',
    },
  ),
  /** A lookup call is 27 tokens with its end-of-turn token in the tiny tokenizer; a few spare. */
  maxTokensPerTurn: documented(intBetween(1, 32_768).default(32), {
    doc: 'completion tokens per assistant turn',
    flag: 'max-tokens',
    arg: 'N',
  }),
  concurrency: quickSized('concurrency', intBetween(1, 1024).default(16), {
    doc: "episodes running at once in the edge's queue",
    flag: 'concurrency',
    arg: 'N',
  }),
  /*
   * Replicas of the inference endpoint, each its own serve-model with its own copy of the model
   * and its own runtime-loaded adapters: the trainer publishes every version to all of them and the
   * edge routes a version only to those that hold it (docs/trainer.md, fleet publication).
   */
  replicas: documented(intBetween(1, 16).default(1), {
    doc: 'inference replicas (serve-model instances) the trainer publishes to and the edge routes over',
    source: 'one: the whole loop on one endpoint; more shows fleet publication',
    flag: 'replicas',
    arg: 'N',
  }),
  /*
   * Adapter retention on the replicas (trainer/train/retain-adapters.ts), `edgerl train --keep-versions`
   * under the same name and default: RL's publications unload older versions, the starting one included,
   * and the A/B's catch-up loads its arms again (evaluate.ts). The test sets 1, so that retention acts on
   * a run that publishes two versions.
   */
  keepVersions: documented(intBetween(1, 1000).default(defaultFleetChecks.keepVersions), {
    doc: 'newest versions each replica keeps loaded (`edgerl train --keep-versions`); RL unloads older ones as it publishes, and the A/B loads its arms again',
    flag: 'keep-versions',
    arg: 'K',
  }),
  inferencePort: documented(intBetween(0, 65_535).default(0), {
    doc: "the inference endpoint's port (replica i listens on port + i)",
    shownDefault: '0: a free port',
    flag: 'inference-port',
    arg: 'N',
  }),
  edgePort: documented(intBetween(0, 65_535).default(0), {
    doc: "the edge's port",
    shownDefault: '0: a free port',
    flag: 'edge-port',
    arg: 'N',
  }),
});

export type DemoConfigInput = z.input<typeof demoConfigSchema>;
export type DemoConfig = z.output<typeof demoConfigSchema>;

/** Bad settings, every problem listed with the flag to fix. */
export class DemoConfigError extends ConfigError {
  override readonly name = 'DemoConfigError';
  readonly code = 'invalid-demo-config';
  constructor(issues: readonly string[]) {
    super(issues, 'demo configuration:\n  ', '\n  ');
  }
}

/** The defaults, under `--quick`'s sizes when it is set, under what `input` sets. */
export function resolveDemoConfig(input: DemoConfigInput): DemoConfig {
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  const withQuick = input.quick === true ? { ...quickOverrides, ...defined } : defined;
  return parseConfig(demoConfigSchema, withQuick, (issues) => new DemoConfigError(issues));
}
