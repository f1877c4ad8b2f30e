// Checkpoints of a trainer's adapter lineage: `<root>/checkpoints/{step:04d}/` holds the adapter as a
// PEFT directory (adapter_config.json + adapter_model.safetensors), the AdamW moments
// (optimizer.safetensors, the same for every engine: engine/optimizer-state-file.ts) and trainer_state.json (training run, step, the groups the weights include,
// their step records). A checkpoint is written into a temporary directory and renamed into place, so
// a kill leaves either the whole checkpoint or none. Two small marker files follow it through
// publication: publication.json (the registered version) and committed.json (groups marked trained).
// Leaves out choosing when to checkpoint (run-cycle.ts).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { EngineKind, TrainEngine } from '../engine/train-engine.ts';
import { type AdapterProbe, adapterProbeSchema, measureAdapterProbe } from './adapter-probe.ts';
import type { TrainMode } from './train-config.ts';
import { errorMessage } from '../../protocol/error-message.ts';

export const checkpointFormatVersion = 1;

export interface StepRecord {
  readonly step: number;
  readonly metrics: Record<string, number>;
  readonly groupIds: string[];
  /** When the step's computation began and ended (ISO 8601); absent in older checkpoints. */
  readonly startedAt?: string;
  readonly finishedAt?: string;
}

export interface CheckpointState {
  readonly formatVersion: typeof checkpointFormatVersion;
  readonly kind: TrainMode;
  /** Optimiser steps the lineage has taken, this checkpoint's included. */
  readonly step: number;
  readonly trainingRunId: string;
  readonly policyId: string;
  /** The version these weights were trained from (the lineage's last published one, or the base). */
  readonly parentVersionId: string | null;
  /** Groups trained into these weights by the cycle that wrote the checkpoint (consumed, all of them). */
  readonly groupIds: string[];
  /** Consumed groups that gave no gradient, with why (`no-signal`). */
  readonly groupReasons: Record<string, string>;
  /** Per-trajectory notes for the store (tokenization drift). */
  readonly trajectoryNotes: Record<string, Record<string, unknown>>;
  /** The cycle's optimiser steps, recorded in the store on the way to publication. */
  readonly steps: StepRecord[];
  /** Hash of the settings that shape training (a change starts a new training run). */
  readonly configHash: string;
  /** The engine that trained it; absent in checkpoints from before there was a choice (tfjs). */
  readonly engine?: EngineKind;
  readonly createdAt: string;
}

export interface Publication {
  readonly versionId: string;
  readonly version: number;
  readonly adapterName: string;
}

export interface Commit {
  readonly versionId: string;
  readonly adapterName: string;
  readonly adapterUri: string;
  readonly committedAt: string;
}

export interface Checkpoint {
  readonly dir: string;
  readonly state: CheckpointState;
  /** The adapter's answer to the probe sequence (adapter-probe.ts); absent in older checkpoints. */
  readonly probe?: AdapterProbe;
  readonly publication?: Publication;
  readonly commit?: Commit;
}

const stateFile = 'trainer_state.json';
const publicationFile = 'publication.json';
const commitFile = 'committed.json';
const probeFile = 'probe.json';

export function checkpointsDir(root: string): string {
  return join(root, 'checkpoints');
}

export function checkpointName(step: number): string {
  return String(step).padStart(4, '0');
}

/** Writes `text` to `path` through a temporary file, fsync and rename: never a half-written file. */
export async function writeFileAtomic(path: string, text: string | Uint8Array): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

/** Saves the engine's adapter + moments and the state as checkpoint `state.step`; returns it. */
export async function writeCheckpoint(
  root: string,
  parts: { readonly engine: TrainEngine; readonly state: CheckpointState },
): Promise<Checkpoint> {
  const parent = checkpointsDir(root);
  await mkdir(parent, { recursive: true });
  const final = join(parent, checkpointName(parts.state.step));
  if (existsSync(final)) throw new Error(`checkpoint ${final} already exists; refusing to overwrite it`);
  const temporary = join(
    parent,
    `.tmp-${checkpointName(parts.state.step)}-${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  let probe: AdapterProbe;
  try {
    await parts.engine.save(temporary, { optimizer: true });
    // Measured with the weights just saved, so the probe is the checkpoint's own answer.
    probe = await measureAdapterProbe(parts.engine);
    await writeFile(join(temporary, probeFile), `${JSON.stringify(probe)}\n`);
    await writeFile(join(temporary, stateFile), `${JSON.stringify(parts.state, null, 2)}\n`);
    await syncDir(temporary);
    await rename(temporary, final);
    await syncDir(parent);
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
  return { dir: final, state: parts.state, probe };
}

/** Every complete checkpoint under `root`, oldest first (temporary directories are ignored). */
export async function listCheckpoints(root: string): Promise<Checkpoint[]> {
  const parent = checkpointsDir(root);
  if (!existsSync(parent)) return [];
  const names = (await readdir(parent)).filter((name) => /^\d{4,}$/.test(name));
  names.sort((a, b) => Number(a) - Number(b));
  const out: Checkpoint[] = [];
  for (const name of names) {
    const dir = join(parent, name);
    if (!existsSync(join(dir, stateFile))) continue;
    out.push(await readCheckpoint(dir));
  }
  return out;
}

export async function readCheckpoint(dir: string): Promise<Checkpoint> {
  const state = await readJson<CheckpointState>(join(dir, stateFile));
  if (state.formatVersion !== checkpointFormatVersion) {
    throw new Error(
      `${join(dir, stateFile)}: format version ${state.formatVersion}, this trainer reads ${checkpointFormatVersion}`,
    );
  }
  const publication = existsSync(join(dir, publicationFile))
    ? await readJson<Publication>(join(dir, publicationFile))
    : undefined;
  const commit = existsSync(join(dir, commitFile))
    ? await readJson<Commit>(join(dir, commitFile))
    : undefined;
  const probe = existsSync(join(dir, probeFile))
    ? adapterProbeSchema.parse(await readJson<unknown>(join(dir, probeFile)))
    : undefined;
  return {
    dir,
    state,
    ...(publication ? { publication } : {}),
    ...(commit ? { commit } : {}),
    ...(probe ? { probe } : {}),
  };
}

export async function writePublication(
  checkpoint: Checkpoint,
  publication: Publication,
): Promise<Checkpoint> {
  await writeFileAtomic(join(checkpoint.dir, publicationFile), `${JSON.stringify(publication, null, 2)}\n`);
  return { ...checkpoint, publication };
}

export async function writeCommit(checkpoint: Checkpoint, commit: Commit): Promise<Checkpoint> {
  await writeFileAtomic(join(checkpoint.dir, commitFile), `${JSON.stringify(commit, null, 2)}\n`);
  return { ...checkpoint, commit };
}

/** Moves an unpublishable checkpoint aside (kept for inspection, never resumed from). */
export async function discardCheckpoint(checkpoint: Checkpoint, why: string): Promise<string> {
  const target = join(
    dirname(checkpoint.dir),
    `discarded-${checkpointName(checkpoint.state.step)}-${Date.now()}`,
  );
  await writeFile(join(checkpoint.dir, 'discarded.txt'), `${why}\n`);
  await rename(checkpoint.dir, target);
  return target;
}

/**
 * Deletes committed checkpoints beyond the newest `keep`, except those whose version `keepVersions`
 * names (the best by validation: best-version.ts); pending ones are never deleted.
 */
export async function pruneCheckpoints(
  root: string,
  keep: number,
  keepVersions: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const committed = (await listCheckpoints(root)).filter((checkpoint) => checkpoint.commit);
  const doomed = committed
    .slice(0, Math.max(0, committed.length - keep))
    .filter((checkpoint) => !keepVersions.has(checkpoint.commit?.versionId ?? ''));
  for (const checkpoint of doomed) await rm(checkpoint.dir, { recursive: true, force: true });
  return doomed.map((checkpoint) => checkpoint.dir);
}

async function readJson<T>(path: string): Promise<T> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (error) {
    throw new Error(`cannot read ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

async function syncDir(path: string): Promise<void> {
  // fsync on a directory makes the entries (the new files, the rename) durable on power loss; a plain
  // kill cannot lose them. Some platforms refuse to open directories: then there is nothing to do.
  try {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // not supported here
  }
}
