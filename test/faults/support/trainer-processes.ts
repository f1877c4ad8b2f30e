// For the trainer fault scenarios: a Postgres test database (the embedded store is one process at a
// time, so two trainers at once need a server), the tiny model served by serve-model, seeded groups,
// real `edgerl train --once` children, and the ledger read back afterwards. Test-only.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../../db/drivers/open-store.ts';
import type { Store } from '../../../db/store.ts';
import { loadModel, type PolicyModel } from '../../../model/policy-model.ts';
import type { ChatTokenizer } from '../../../model/tokenizer/chat-tokenizer.ts';
import { loadTokenizer } from '../../../model/tokenizer/load-tokenizer.ts';
import { type ServingModel, serveModel } from '../../../serve/serve-model.ts';
import { createTestDatabase, type TestDatabase } from '../../support/open-test-store.ts';
import { seedGroup, seedPolicy } from '../../train/support/seed-groups.ts';
import { useWasm, writeTinyModelDir } from '../../train/support/tiny-policy.ts';
import { trainOnceArgs } from '../../train/support/train-once-args.ts';
import type { FaultOutcome } from './fault-outcome.ts';

const repo = fileURLToPath(new URL('../../..', import.meta.url));

export interface TrainerRig {
  readonly root: string;
  readonly store: Store;
  readonly databaseUrl: string;
  readonly baseVersionId: string;
  /** Seeds one complete group with reward spread, served by the base version. */
  seed(seedNumber: number): Promise<string>;
  /**
   * Starts `edgerl train --once` (or `--continuous`) on policy `agent` with its own output directory,
   * on the rig's database or `databaseUrl` (the same database behind a proxy).
   */
  train(
    name: string,
    options?: {
      pauseAt?: string;
      leaseSeconds?: number;
      extra?: readonly string[];
      env?: NodeJS.ProcessEnv;
      continuous?: boolean;
      databaseUrl?: string;
    },
  ): Trainer;
  ledger(): Promise<Ledger>;
  close(): Promise<void>;
}

export interface Trainer {
  readonly child: ChildProcess;
  output(): string;
  readonly exited: Promise<number | null>;
  /** Resolves once the output contains `text` (rejects if the child exits first or 90 s pass). */
  waitFor(text: string): Promise<void>;
}

export interface Ledger {
  readonly versions: { id: string; name: string; parent: string | null; status: string; groups: string[] }[];
  readonly defaultVersionId: string | undefined;
  readonly groups: { id: string; status: string; owner: string | null }[];
  readonly stepGroups: string[];
  readonly runs: { id: string; status: string }[];
  /** Policy leases held now (unexpired): none once every trainer has exited or been taken over. */
  readonly heldPolicyLeases: number;
}

export async function openTrainerRig(serverUrl: string): Promise<TrainerRig> {
  await useWasm();
  const root = await mkdtemp(join(tmpdir(), 'edgerl-faults-'));
  const modelDir = join(root, 'model');
  await writeTinyModelDir(modelDir);
  const database: TestDatabase = await createTestDatabase(serverUrl);
  const store = await openStore({ url: database.url, migrations: 'apply' });
  const [sampler, tokenizer]: [PolicyModel, ChatTokenizer] = await Promise.all([
    loadModel(modelDir),
    loadTokenizer(modelDir),
  ]);
  const serving: ServingModel = await serveModel({ modelDir, port: 0, log: () => {} });
  const baseVersionId = (await seedPolicy(store, 'agent')).base.id;
  const children: ChildProcess[] = [];

  const query = async (text: string) => (await store.sql.query(text, [])).rows;

  return {
    root,
    store,
    databaseUrl: database.url,
    baseVersionId,
    async seed(seedNumber) {
      const seeded = await seedGroup(store, sampler, tokenizer, {
        versionId: baseVersionId,
        rewards: [1, 0, 0, 1],
        seed: seedNumber,
      });
      return seeded.groupId;
    },
    train(name, options = {}) {
      const once = trainOnceArgs({
        modelDir,
        inferenceUrl: `${serving.url}/v1`,
        outputDir: join(root, name),
        extra: [
          '--database-url',
          options.databaseUrl ?? database.url,
          ...(options.leaseSeconds ? ['--lease-seconds', String(options.leaseSeconds)] : []),
          ...(options.extra ?? []),
        ],
      });
      const args = options.continuous ? once.map((arg) => (arg === '--once' ? '--continuous' : arg)) : once;
      const { EDGERL_TRAIN_PAUSE_AT: _pause, DATABASE_URL: _url, ...env } = process.env;
      const child = spawn(process.execPath, args, {
        cwd: repo,
        env: {
          ...env,
          EDGERL_BACKEND: 'wasm',
          ...(options.pauseAt ? { EDGERL_TRAIN_PAUSE_AT: options.pauseAt } : {}),
          ...options.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let text = '';
      const append = (chunk: Buffer) => {
        text += chunk.toString();
      };
      child.stdout?.on('data', append);
      child.stderr?.on('data', append);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return {
        child,
        output: () => text,
        exited,
        async waitFor(wanted) {
          const deadline = Date.now() + 90_000;
          while (!text.includes(wanted)) {
            if (child.exitCode !== null) throw new Error(`${name} exited before "${wanted}":\n${text}`);
            if (Date.now() > deadline) throw new Error(`${name} never printed "${wanted}":\n${text}`);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        },
      };
    },
    async ledger() {
      const versions = (
        await query(
          `select v.id, v.adapter_name, v.parent_version_id, v.status, v.metadata->'groupIds' from policy_versions v
           join policies p on p.id = v.policy_id where p.name = 'agent' order by v.version`,
        )
      ).map(([id, name, parent, status, groups]) => ({
        id: String(id),
        name: String(name),
        parent: parent === null ? null : String(parent),
        status: String(status),
        groups: ((groups as string[] | null) ?? []).map(String),
      }));
      const groups = (
        await query('select id, status, lease_owner from rollout_groups order by created_at')
      ).map(([id, status, owner]) => ({
        id: String(id),
        status: String(status),
        owner: owner as string | null,
      }));
      const stepGroups = (await query('select group_ids from training_steps')).flatMap(([ids]) =>
        (ids as string[]).map(String),
      );
      const runs = (await query('select id, status from training_runs order by started_at')).map(
        ([id, status]) => ({
          id: String(id),
          status: String(status),
        }),
      );
      const defaultVersionId = (await store.getDefaultVersion({ policyName: 'agent' }))?.id;
      const [[held]] = (await query('select count(*)::int from policy_leases where expires_at > now()')) as [
        [number],
      ];
      return { versions, defaultVersionId, groups, stepGroups, runs, heldPolicyLeases: Number(held) };
    },
    async close() {
      for (const child of children)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await serving.close();
      sampler.dispose();
      await store.close();
      await database.drop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Checks the policy's published versions form one chain (each one's parent the one before it, the
 * newest the default) and returns the groups the chain includes, in order. */
export function lineageGroups(ledger: Ledger): string[] {
  const published = ledger.versions.filter((version) => version.status === 'published');
  for (const [index, version] of published.entries()) {
    const previous = published[index - 1];
    if (version.parent !== (previous ? previous.id : null)) {
      throw new Error(`${version.name} descends from ${version.parent}, not ${previous?.name ?? 'nothing'}`);
    }
  }
  if (ledger.defaultVersionId !== published.at(-1)?.id)
    throw new Error('the default is not the newest version');
  return published.flatMap((version) => version.groups);
}

/**
 * What a trainer fault left behind, from the ledger: `expected` groups missing from the default
 * lineage (lost: their update is not in the default adapter; every group of a forked lineage counts),
 * groups in two versions or two training steps (duplicates), and runs left `running`, group leases
 * still owned and policy leases still held (leaks).
 */
export function ledgerFaults(ledger: Ledger, expected: readonly string[]): FaultOutcome {
  let included: string[];
  try {
    included = lineageGroups(ledger);
  } catch {
    included = [];
  }
  const inLineage = new Set(included);
  return {
    lostTurns: expected.filter((group) => !inLineage.has(group)).length,
    duplicates: included.length - inLineage.size + ledger.stepGroups.length - new Set(ledger.stepGroups).size,
    leaks:
      ledger.runs.filter((run) => run.status === 'running').length +
      ledger.groups.filter((group) => group.owner !== null).length +
      ledger.heldPolicyLeases,
  };
}
