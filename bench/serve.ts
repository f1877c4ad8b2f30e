// npm run bench:serve — the local inference endpoint under load: decode tokens per second and time to
// first token for 1 request alone and for 8 concurrent requests (a GRPO group) on the same model,
// side by side, measured in the same run over HTTP with streaming chat completions; then the group's
// decode tokens/s under guided decoding (response_format json_schema, tool_choice "required") beside
// the same group unguided; then one mask on Qwen's real vocabulary, trie walk beside stepping every
// token alone; then the main thread beside decode workers (bench/serve-workers.ts). Reports, does not
// assert. Options: --preset tiny|small (default small), --tokens N (default 64), --concurrency N
// (default 8), --repeats N (default 3, the median is shown); for the workers' section --batches
// (default 1,8,16,64), --adapter-rank (default 64), --prompt-padding (default 20 filler phrases), and
// --workers-only to run only it. Backend: EDGERL_BACKEND or the default order.
//
// Definitions: bench/serve-requests.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initModelDir } from '../model/init-model-dir.ts';
import { isModelPreset } from '../model/init-model.ts';
import { loadQwenTokenizer } from '../model/tokenizer/test-fixtures.ts';
import { type AutomatonState, canonicalState } from '../serve/automaton-state.ts';
import { startState, stepState } from '../serve/grammar-automaton.ts';
import { GuidedConstraint } from '../serve/guided-constraint.ts';
import { compileGuided } from '../serve/guided-decoding.ts';
import { guidedVocabulary } from '../serve/guided-vocabulary.ts';
import { serveModel } from '../serve/serve-model.ts';
import { median, timeGroup } from './serve-requests.ts';
import { compareWorkers } from './serve-workers.ts';

const { values } = parseArgs({
  options: {
    preset: { type: 'string', default: 'small' },
    tokens: { type: 'string', default: '64' },
    concurrency: { type: 'string', default: '8' },
    repeats: { type: 'string', default: '3' },
    'adapter-rank': { type: 'string', default: '64' },
    batches: { type: 'string', default: '1,8,16,64' },
    'prompt-padding': { type: 'string', default: '20' },
    'workers-only': { type: 'boolean', default: false },
  },
});
const preset = values.preset as string;
if (!isModelPreset(preset)) throw new Error(`--preset must be tiny or small, got ${preset}`);
const tokens = Number(values.tokens);
const concurrency = Number(values.concurrency);
const repeats = Number(values.repeats);
for (const [name, value] of [
  ['tokens', tokens],
  ['concurrency', concurrency],
  ['repeats', repeats],
] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
}

const dir = await mkdtemp(join(tmpdir(), 'edgerl-bench-serve-'));
const modelDir = join(dir, 'model');
const { parameters } = await initModelDir(modelDir, { preset, architecture: 'qwen2', seed: 0, dtype: 'F32' });
const serving = await serveModel({
  modelDir,
  port: 0,
  servedModelName: 'bench',
  backend: process.env.EDGERL_BACKEND || undefined,
});

/**
 * Guided requests that cannot be complete before `tokens` tokens (an array of at least `tokens`
 * items), so that, like the unguided ones under ignore_eos, each decodes exactly `tokens` tokens.
 */
const longArray = {
  type: 'object',
  // Not named "items": the tiny chat template's `properties.items()` would find the property instead.
  properties: { list: { type: 'array', items: { type: 'string', maxLength: 6 }, minItems: tokens } },
  required: ['list'],
  additionalProperties: false,
};
const kinds = {
  unguided: { ignore_eos: true },
  json_schema: { response_format: { type: 'json_schema', json_schema: { name: 'list', schema: longArray } } },
  'tool_choice required': {
    tools: [{ type: 'function', function: { name: 'record', parameters: longArray } }],
    tool_choice: 'required',
  },
} satisfies Record<string, Record<string, unknown>>;
type Kind = keyof typeof kinds;

function group(size: number, round: number, kind: Kind = 'unguided') {
  return timeGroup(serving, { model: 'bench', size, round, tokens, extra: kinds[kind] });
}

const batches = (values.batches as string).split(',').map(Number);
const adapterRank = Number(values['adapter-rank']);
if (
  !batches.every((size) => Number.isInteger(size) && size >= 1) ||
  !(Number.isInteger(adapterRank) && adapterRank >= 1)
) {
  throw new Error(
    '--batches must be positive integers separated by commas, --adapter-rank a positive integer',
  );
}

try {
  const compare = () =>
    compareWorkers({
      modelDir,
      dir,
      tokens,
      repeats,
      adapterRank,
      batches,
      padding: Number(values['prompt-padding']),
      backend: process.env.EDGERL_BACKEND || undefined,
    });
  if (values['workers-only']) await compare();
  else await fullBench(compare);
} finally {
  await serving.close();
  await rm(dir, { recursive: true, force: true });
}

/** Every section but the workers' comparison runs here, then `compare`. */
async function fullBench(compare: () => Promise<void>): Promise<void> {
  await group(concurrency, 99); // warm-up: kernels, caches, the JIT
  const runs = {
    one: [] as Awaited<ReturnType<typeof group>>[],
    many: [] as Awaited<ReturnType<typeof group>>[],
  };
  for (let round = 0; round < repeats; round++) {
    runs.one.push(await group(1, round));
    runs.many.push(await group(concurrency, round));
  }
  const pick = (list: typeof runs.one, key: keyof (typeof runs.one)[number]) =>
    median(list.map((r) => r[key]));
  const rows: [string, number, number, (n: number) => string][] = [
    [
      'decode tokens/s',
      pick(runs.one, 'decodeTokensPerSecond'),
      pick(runs.many, 'decodeTokensPerSecond'),
      (n) => n.toFixed(0),
    ],
    ['time to first token (ms)', pick(runs.one, 'ttftMs'), pick(runs.many, 'ttftMs'), (n) => n.toFixed(1)],
    ['decode steps', pick(runs.one, 'steps'), pick(runs.many, 'steps'), (n) => n.toFixed(0)],
    [
      'rows per decode step',
      pick(runs.one, 'rowsPerStep'),
      pick(runs.many, 'rowsPerStep'),
      (n) => n.toFixed(2),
    ],
  ];
  const head = ['', '1 request', `${concurrency} concurrent`, 'ratio'];
  const table = [
    head,
    ...rows.map(([name, one, many, format]) => [
      name,
      format(one),
      format(many),
      `${(many / one).toFixed(2)}×`,
    ]),
  ];
  const widths = head.map((_, column) => Math.max(...table.map((row) => (row[column] as string).length)));
  console.log(
    `serve-model bench: ${preset} qwen2 (${parameters.toLocaleString('en-US')} parameters), ${tokens} tokens per request, median of ${repeats}`,
  );
  for (const row of table)
    console.log(row.map((cell, column) => cell.padStart(widths[column] as number)).join('  '));

  const guided: Record<Kind, number[]> = { unguided: [], json_schema: [], 'tool_choice required': [] };
  for (const kind of Object.keys(kinds) as Kind[]) await group(concurrency, 98, kind); // warm-up
  for (let round = 0; round < repeats; round++) {
    for (const kind of Object.keys(kinds) as Kind[]) {
      guided[kind].push((await group(concurrency, round, kind)).decodeTokensPerSecond);
    }
  }
  const plain = median(guided.unguided);
  console.log(
    `\nguided decoding, ${concurrency} concurrent requests of ${tokens} tokens, median of ${repeats}`,
  );
  const guidedTable = [
    ['', 'decode tokens/s', 'vs unguided'],
    ...(Object.keys(kinds) as Kind[]).map((kind) => [
      kind,
      median(guided[kind]).toFixed(0),
      `${(median(guided[kind]) / plain).toFixed(2)}×`,
    ]),
  ];
  const guidedWidths = [0, 1, 2].map((column) =>
    Math.max(...guidedTable.map((row) => (row[column] as string).length)),
  );
  for (const row of guidedTable)
    console.log(row.map((cell, column) => cell.padStart(guidedWidths[column] as number)).join('  '));
  await compare();
  qwenMasks();
}

/**
 * One mask on Qwen's 151,669-token vocabulary (what a real model's guided step costs; the bench models
 * have 576 tokens), inside a tool call's string argument and at its first key: the trie walk (a fresh
 * constraint, so no mask is cached; the automaton's step memo is shared by both) beside stepping each
 * token's bytes alone, in the same run.
 */
function qwenMasks(): void {
  const qwen = loadQwenTokenizer();
  const vocabulary = guidedVocabulary(qwen, 151936);
  const tools = [
    { name: 'lookup', parameters: { type: 'object', properties: { key: { type: 'string' } } }, strict: true },
  ];
  const guided = compileGuided({ kind: 'tool-calls', tools, mode: { kind: 'required', parallel: true } });
  console.log(
    "\none mask on Qwen's vocabulary (151,669 tokens), median of 5 (mask cache empty each time, step memo kept)",
  );
  const rows = [['state', 'allowed', 'trie walk ms', 'token by token ms', 'ratio']];
  for (const [name, text] of [
    ['at the first key', '<tool_call>\n{"name": "lookup", "arguments": {'],
    ['inside a string', '<tool_call>\n{"name": "lookup", "arguments": {"key": "Par'],
  ] as const) {
    let state: AutomatonState = startState(guided.grammar);
    for (const byte of new TextEncoder().encode(text)) state = stepState(state, byte) as AutomatonState;
    const walks: number[] = [];
    const singles: number[] = [];
    let allowed = 0;
    for (let i = 0; i < 5; i++) {
      const fresh = canonicalState(state);
      const constraint = new GuidedConstraint(guided.grammar, vocabulary, qwen.eosTokenIds);
      let started = performance.now();
      allowed = constraint.maskOf(fresh.state, fresh.key).length;
      walks.push(performance.now() - started);
      started = performance.now();
      let count = 0;
      const from = canonicalState(state).state;
      for (const bytes of vocabulary.tokenBytes) {
        let next: AutomatonState | undefined = bytes.length > 0 ? from : undefined;
        for (const byte of bytes) next = next && stepState(next, byte);
        if (next) count += 1;
      }
      singles.push(performance.now() - started);
      if (count === 0) throw new Error('no token fits');
    }
    rows.push([
      name,
      String(allowed),
      median(walks).toFixed(1),
      median(singles).toFixed(1),
      `${(median(singles) / median(walks)).toFixed(1)}×`,
    ]);
  }
  const widths = [0, 1, 2, 3, 4].map((column) =>
    Math.max(...rows.map((row) => (row[column] as string).length)),
  );
  for (const row of rows)
    console.log(row.map((cell, column) => cell.padStart(widths[column] as number)).join('  '));
}
