// The closed table of `edgerl` commands: the words that select each, its line in the command list, and
// how to load it. Modules load on demand, so a call pays only for the command it runs (TensorFlow.js,
// the trainer and the edge app stay unloaded for `edgerl db migrate`). What a command does is in its file.
import type { Command } from './command.ts';

export interface CommandEntry {
  /** Words that select the command, e.g. `['db', 'migrate']`. */
  readonly name: readonly string[];
  /** One line for the command list. */
  readonly summary: string;
  /** Imports the command's module; only the command that runs is loaded. */
  load(): Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: ['demo'],
    summary: 'Run the whole loop on this machine and show the agent learning (offline, ~3 min on 2 cores)',
    load: () => import('./commands/demo.ts').then((m) => m.demoCommand),
  },
  {
    name: ['db', 'migrate'],
    summary: 'Apply the trajectory store migrations to the configured database',
    load: () => import('./commands/db-migrate.ts').then((m) => m.dbMigrateCommand),
  },
  {
    name: ['sandbox', 'setup'],
    summary: "Create the SQL agent's sandbox database and reader role on a Postgres server; print its URL",
    load: () => import('./commands/sandbox-setup.ts').then((m) => m.sandboxSetupCommand),
  },
  {
    name: ['sql'],
    summary: 'Run a SQL query against the trajectory store and print the result',
    load: () => import('./commands/sql.ts').then((m) => m.sqlCommand),
  },
  {
    name: ['import'],
    summary: 'Store recorded episodes from a JSONL file of chats (OpenAI format, optional token ids)',
    load: () => import('./commands/import.ts').then((m) => m.importCommand),
  },
  {
    name: ['score'],
    summary: 'Score one rollout group with RULER (LLM judge) and record the scores',
    load: () => import('./commands/score.ts').then((m) => m.scoreCommand),
  },
  {
    name: ['model', 'init'],
    summary: 'Write a tiny random Qwen2/Llama model directory (weights + tokenizer) for tests and demos',
    load: () => import('./commands/model-init.ts').then((m) => m.modelInitCommand),
  },
  {
    name: ['serve-model'],
    summary:
      'Serve a model and its LoRA adapters with a vLLM-compatible OpenAI API (chat, completions, LoRA)',
    load: () => import('./commands/serve-model.ts').then((m) => m.serveModelCommand),
  },
  {
    name: ['train'],
    summary: "Train the policy's LoRA adapter with GRPO on scored groups (or SFT) and publish it",
    load: () => import('./commands/train.ts').then((m) => m.trainCommand),
  },
  {
    name: ['fleet', 'catch-up'],
    summary: 'Load the published versions each inference replica lacks (after a restart or a quarantine)',
    load: () => import('./commands/fleet-catch-up.ts').then((m) => m.fleetCatchUpCommand),
  },
  {
    name: ['fleet', 'status'],
    summary: 'Show where each policy version is served: its state on every inference replica',
    load: () => import('./commands/fleet-status.ts').then((m) => m.fleetStatusCommand),
  },
  {
    name: ['console'],
    summary: 'Serve the web console: runs, groups, trajectories, policies and experiments (or --export DIR)',
    load: () => import('./commands/console.ts').then((m) => m.consoleCommand),
  },
  {
    name: ['edge'],
    summary: 'Run the edge (rollouts API, recording proxy, A/B routing) in Node, or the Worker via wrangler',
    load: () => import('./commands/edge.ts').then((m) => m.edgeCommand),
  },
  {
    name: ['init'],
    summary: 'Scaffold an environment of your own (module, test, README) for edgerl edge --environments',
    load: () => import('./commands/init.ts').then((m) => m.initCommand),
  },
  {
    name: ['rollout'],
    summary: 'Start rollout groups through an edge and follow them until they finish',
    load: () => import('./commands/rollout.ts').then((m) => m.rolloutCommand),
  },
  {
    name: ['ab', 'create'],
    summary: 'Start an A/B experiment between policy versions',
    load: () => import('./commands/ab-create.ts').then((m) => m.abCreateCommand),
  },
  {
    name: ['policy', 'create'],
    summary: 'Create a policy with its base weights as version 0, the default',
    load: () => import('./commands/policy.ts').then((m) => m.policyCreateCommand),
  },
  {
    name: ['policy', 'list'],
    summary: 'List policies with their base model and default version',
    load: () => import('./commands/policy.ts').then((m) => m.policyListCommand),
  },
  {
    name: ['policy', 'show'],
    summary: "Show a policy's versions, the default marked",
    load: () => import('./commands/policy.ts').then((m) => m.policyShowCommand),
  },
  {
    name: ['ab', 'list'],
    summary: 'List A/B experiments with their arms and sample counts',
    load: () => import('./commands/ab-list.ts').then((m) => m.abListCommand),
  },
  {
    name: ['ab', 'report'],
    summary: 'Compare the arms of an A/B experiment and say which version to keep',
    load: () => import('./commands/ab-report.ts').then((m) => m.abReportCommand),
  },
  {
    name: ['ab', 'stop'],
    summary: 'Stop an A/B experiment: no more traffic is routed to it',
    load: () => import('./commands/ab-stop.ts').then((m) => m.abStopCommand),
  },
  {
    name: ['ab', 'promote'],
    summary: "Make an arm's version the policy's default and stop the experiment",
    load: () => import('./commands/ab-promote.ts').then((m) => m.abPromoteCommand),
  },
  {
    name: ['ab', 'rollback'],
    summary: "Restore the policy's default version from before its last promote",
    load: () => import('./commands/ab-rollback.ts').then((m) => m.abRollbackCommand),
  },
];

/** The entry whose words start `argv`, the longest when several do (`ab` is a group, `ab list` a command). */
export function findCommand(argv: readonly string[]): CommandEntry | undefined {
  let best: CommandEntry | undefined;
  for (const entry of commands) {
    const matches = entry.name.every((word, index) => argv[index] === word);
    if (matches && (!best || entry.name.length > best.name.length)) best = entry;
  }
  return best;
}
