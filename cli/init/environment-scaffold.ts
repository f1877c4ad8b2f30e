// The files `edgerl init` writes: an environment module, its vitest test (one episode through the real
// loop against a scripted policy) and a README. Pure: a name in, paths and texts out; the command writes them.

export interface ScaffoldFile {
  /** Relative to the directory `edgerl init` was given. */
  readonly path: string;
  readonly text: string;
  /**
   * Written only where the file is missing, and an existing one is no clash: the package.json that makes
   * the directory's .ts files ES modules (tsx compiles them as CommonJS otherwise).
   */
  readonly onlyIfAbsent?: boolean;
}

/** The scaffold for an environment called `name` (kebab-case, checked by the caller). */
export function environmentScaffold(name: string): ScaffoldFile[] {
  const binding = camelCase(name);
  return [
    { path: 'environments.ts', text: environmentsModule(name, binding) },
    { path: 'environments.test.ts', text: environmentsTest(name, binding) },
    { path: 'README.md', text: readme(name) },
    { path: 'package.json', text: packageJson(name), onlyIfAbsent: true },
  ];
}

function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

function environmentsModule(name: string, binding: string): string {
  return `// ${name}: reverse a short word. The policy may call \`reverse\` and should answer with its result.
// Written by \`edgerl init\`: replace the task, the tool and the verifier with your own.
import { z } from 'zod';
import {
  type ChatMessage,
  defineEnvironment,
  defineTool,
  randomInt,
  seededRandom,
  splitOf,
  type TaskSplit,
  taskSplits,
  ToolRefusal,
} from 'edgerl/environment';

export const taskSchema = z.object({
  id: z.string(),
  split: z.enum(taskSplits),
  prompt: z.string(),
  word: z.string(),
  answer: z.string(),
});
export type ReverseTask = z.infer<typeof taskSchema>;

const letters = 'abcdefghijklmnopqrstuvwxyz';

/** A word of 3–6 random letters; the task's split comes from a hash of its id, so it never changes. */
function sampleTask(split: TaskSplit, seed: number): ReverseTask {
  const random = seededRandom(seed);
  for (;;) {
    const length = 3 + randomInt(random, 4);
    const word = Array.from({ length }, () => letters[randomInt(random, letters.length)]).join('');
    const id = \`${name}:\${word}\`;
    // 15% of the ids are held out for evaluation and 5% for validation.
    if (splitOf(id, 0.15, 0.05) !== split) continue;
    const answer = [...word].reverse().join('');
    return { id, split, prompt: \`Reverse "\${word}".\`, word, answer };
  }
}

const reverse = defineTool({
  name: 'reverse',
  description: 'Reverse a text.',
  parameters: z.object({ text: z.string() }),
  run({ text }) {
    // A refusal is an observation the policy sees ({"error": ...}); the episode goes on.
    if (text.length > 40) throw new ToolRefusal('text longer than 40 characters');
    return [...text].reverse().join('');
  },
});

/** Levenshtein distance: how many one-character edits turn \`a\` into \`b\`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Partial credit in [0, 1]: 1 for the answer itself, lower the more edits it needs, and above 0 for any
 * non-empty reply. GRPO learns from the differences within a group, so a verifier that gives an
 * untrained policy's whole group the same 0 teaches it nothing.
 */
function similarity(reply: string, answer: string): number {
  return 1 - editDistance(reply, answer) / (reply.length + answer.length || 1);
}

/** The text of the last assistant turn, for an episode the token limit or the turn limit cut off. */
function lastReply(messages: readonly ChatMessage[]): string {
  const replies = messages.filter((message) => message.role === 'assistant' && message.content);
  return replies.at(-1)?.content ?? '';
}

export const ${binding} = defineEnvironment<ReverseTask>({
  name: '${name}',
  description: 'Reverse a short word, with a reverse tool.',
  systemPrompt: 'Use reverse, then reply with its result.',
  tools: [reverse],
  maxTurns: 3,
  taskSchema,
  sampleTask,
  verify({ task, messages, finalAnswer }) {
    if (finalAnswer !== null) {
      const reward = similarity(finalAnswer.trim().replace(/^"|"$/g, ''), task.answer);
      return { reward, detail: reward === 1 ? 'correct' : \`expected \${task.answer}\` };
    }
    // A cut-off reply is no answer: half credit, so that answering at all pays more.
    const reply = lastReply(messages);
    return { reward: reply ? similarity(reply, task.answer) / 2 : 0, detail: 'no final answer' };
  },
});

/** What \`edgerl edge --environments\` reads: a record by name, or an array. */
export const environments = [${binding}];
`;
}

function environmentsTest(name: string, binding: string): string {
  return `// One episode of ${name} through edgerl's real episode loop, against a scripted policy (a test double).
import {
  InMemoryTrajectorySink,
  runEpisode,
  ScriptedPolicyClient,
  textReply,
  toolCallReply,
} from 'edgerl/environment/testing';
import { describe, expect, it } from 'vitest';
import { ${binding} } from './environments.ts';

describe('${name}', () => {
  it('rewards the answer the reverse tool gave with 1, and a wrong one with less', async () => {
    const task = ${binding}.sampleTask('train', 1);
    const policy = new ScriptedPolicyClient([
      toolCallReply([{ id: 'call_1', name: 'reverse', arguments: { text: task.word } }]),
      textReply(task.answer),
    ]);
    const sink = new InMemoryTrajectorySink();
    const result = await runEpisode({ environment: ${binding}, task, policy, sink, model: 'scripted' });
    policy.assertDone();
    expect(result).toMatchObject({ status: 'finished', reward: 1 });
    expect(result.messages.find((message) => message.role === 'tool')?.content).toBe(task.answer);

    const guess = new ScriptedPolicyClient([textReply(task.word)]);
    const guessed = await runEpisode({
      environment: ${binding},
      task,
      policy: guess,
      sink: new InMemoryTrajectorySink(),
      model: 'scripted',
    });
    expect(guessed.reward).toBeLessThan(1);
  });

  it('keeps each task in the split it was asked for', () => {
    for (const split of ['train', 'eval', 'validation'] as const) {
      for (const task of ${binding}.tasks(split, 20, 7)) expect(task.split).toBe(split);
    }
  });
});
`;
}

function packageJson(name: string): string {
  return `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`;
}

function readme(name: string): string {
  return `# ${name}

An edgerl environment, written by \`edgerl init\`.

- \`environments.ts\`: the environment (\`defineEnvironment\` and \`defineTool\` from \`edgerl/environment\`); its
  \`environments\` export is what the edge loads.
- \`environments.test.ts\`: one episode against a scripted policy (\`npx vitest run\`).
- \`package.json\` (when there was none): \`"type": "module"\`, so that the .ts files load as ES modules.

Serve it beside the shipped environments, roll out groups and train on them:

\`\`\`sh
npm install edgerl zod                      # what environments.ts imports, if this project lacks them
npx edgerl policy create agent --base-model tiny
export EDGERL_EDGE_API_KEYS=local-dev-key   # the edge accepts it; rollout sends it
npx edgerl edge --environments ./environments.ts --default-model agent &
npx edgerl rollout --env ${name} --policy agent --groups 4 --size 8
\`\`\`

The walkthrough is edgerl's docs/environments.md, "Your own environment".
`;
}
