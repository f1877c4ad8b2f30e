// npm run bench:serve — the local inference endpoint under load: decode tokens per second and time to
// first token for 1 request alone and for 8 concurrent requests (a GRPO group) on the same model,
// side by side, measured in the same run over HTTP with streaming chat completions. Reports, does not
// assert. Options: --preset tiny|small (default small), --tokens N (default 64), --concurrency N
// (default 8), --repeats N (default 3, the median is shown). Backend: EDGERL_BACKEND or the default order.
//
// Definitions: time to first token = request sent → first streamed token; decode tokens/s = tokens
// after each request's first, summed over the group, divided by the time from the group's first
// first-token to its last token (so prefill and queueing count in TTFT, not in decode speed).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initModelDir } from '../model/init-model-dir.ts';
import { isModelPreset } from '../model/init-model.ts';
import { serveModel } from '../serve/serve-model.ts';

const { values } = parseArgs({
  options: {
    preset: { type: 'string', default: 'small' },
    tokens: { type: 'string', default: '64' },
    concurrency: { type: 'string', default: '8' },
    repeats: { type: 'string', default: '3' },
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

interface Timing {
  sent: number;
  first: number;
  end: number;
  tokens: number;
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

/** One streaming chat request; times its first token and its end. */
async function request(episode: number, seed: number): Promise<Timing> {
  const sent = performance.now();
  const response = await fetch(`${serving.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bench',
      messages: [
        { role: 'user', content: `Episode ${episode}: look up key ${episode * 7} and report its value.` },
      ],
      max_tokens: tokens,
      ignore_eos: true,
      seed,
      stream: true,
      return_token_ids: true,
    }),
  });
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let first = 0;
  let count = 0;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    const events = buffer.split('\n\n');
    buffer = events.pop() ?? '';
    for (const event of events) {
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { choices: { token_ids?: number[] }[] };
      const ids = chunk.choices[0]?.token_ids?.length ?? 0;
      if (ids > 0 && first === 0) first = performance.now();
      count += ids;
    }
  }
  if (count !== tokens) throw new Error(`expected ${tokens} tokens, got ${count}`);
  return { sent, first, end: performance.now(), tokens: count };
}

async function group(size: number, round: number) {
  const before = serving.engine.stats();
  const timings = await Promise.all(Array.from({ length: size }, (_, i) => request(i, round * 100 + i)));
  const after = serving.engine.stats();
  const firstToken = Math.min(...timings.map((t) => t.first));
  const lastToken = Math.max(...timings.map((t) => t.end));
  const decoded = timings.reduce((sum, t) => sum + t.tokens - 1, 0);
  return {
    decodeTokensPerSecond: decoded / ((lastToken - firstToken) / 1000),
    ttftMs: timings.reduce((sum, t) => sum + t.first - t.sent, 0) / size,
    steps: after.decodeSteps - before.decodeSteps,
    rowsPerStep: (after.decodeRows - before.decodeRows) / Math.max(1, after.decodeSteps - before.decodeSteps),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

try {
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
} finally {
  await serving.close();
  await rm(dir, { recursive: true, force: true });
}
