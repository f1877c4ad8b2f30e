// The whole demo in one process sharing one Store: services → warm start → RL rounds → A/B
// evaluation → summary and the console's static export. Times each phase; on Ctrl-C stops after the
// current unit of work and closes servers, trainer and store (every store write is a transaction;
// checkpoints, the summary and the export are written to a temporary name and renamed).
import { mkdirSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { openStore } from '../../db/drivers/open-store.ts';
import { defaultConsolePort } from '../console/console-port.ts';
import { tokenTextFromModel } from '../console/token-text.ts';
import { writeConsoleExport } from '../console/write-export.ts';
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { createMemoryRulerCache } from '../../trainer/ruler/ruler-cache.ts';
import { rulerConfigFromEnv } from '../../trainer/ruler/ruler-config.ts';
import type { JudgeDeps } from '../../trainer/train/group-rewards.ts';
import type { DemoConfig } from './demo-config.ts';
import { demoPaths } from './demo-paths.ts';
import type { DemoProgress } from './demo-progress.ts';
import { publishedVersions, stepRewards, storeCounts } from './demo-queries.ts';
import { evaluate } from './evaluate.ts';
import { asyncRounds } from './async-rounds.ts';
import { rlRounds } from './rl-rounds.ts';
import { type DemoServices, startServices } from './start-services.ts';
import { DemoStopped, type StopSignal } from './stop-signal.ts';
import { type DemoPhase, type DemoSummary, demoQueries } from './summary.ts';
import { demoPolicyName } from './trainer-config.ts';
import { chooseShipped, describeChoice } from './validate.ts';
import { warmStart } from './warm-start.ts';

export interface DemoDeps {
  readonly progress: DemoProgress;
  readonly stop: StopSignal;
  readonly env: NodeJS.ProcessEnv;
}

export async function runDemo(config: DemoConfig, deps: DemoDeps): Promise<DemoSummary> {
  const { progress, stop } = deps;
  const paths = demoPaths(config.dataDir);
  if (config.fresh) {
    rmSync(paths.dataDir, { recursive: true, force: true });
    progress.line(`--fresh: removed ${paths.dataDir}`);
  }
  mkdirSync(paths.dataDir, { recursive: true });
  const judge = judgeFromEnv(deps.env);
  const seconds = {} as Record<DemoPhase, number>;
  const began = performance.now();
  let phaseStart = began;
  const phase = (name: DemoPhase, title: string) => {
    progress.line(`\n== ${title}`);
    phaseStart = performance.now();
    return () => {
      seconds[name] = (performance.now() - phaseStart) / 1000;
    };
  };

  let end = phase('services', '1/5 store, model, inference endpoint, edge');
  const store = await openStore({ dataDir: paths.store, migrations: 'apply' });
  let services: DemoServices | undefined;
  try {
    progress.line(`store: ${store.target} (${store.driver})`);
    services = await startServices(config, paths, store, (line) => progress.line(line));
    end();
    stop.check();

    end = phase('warmStart', '2/5 warm start: SFT on scripted demonstrations');
    const warm = await warmStart(config, paths, {
      store,
      progress,
      inferenceUrls: services.inferenceUrls,
      stop,
    });
    end();
    stop.check();
    if (config.warmStartOnly) throw new DemoStopped('warm-start-only');

    end = phase(
      'rl',
      `3/5 RL${config.async ? ' (async: rollouts and training overlapped)' : ''}: ${config.rounds} round(s) of ${config.groupsPerRound} groups × ${config.groupSize} episodes`,
    );
    if (judge) progress.line('rewards: verifier + RULER (EDGERL_JUDGE_BASE_URL is set)');
    const rl = await (config.async ? asyncRounds : rlRounds)(config, paths, {
      store,
      progress,
      client: services.client,
      inferenceUrls: services.inferenceUrls,
      judge,
      stop,
    });
    end();
    stop.check();

    end = phase('evaluate', `4/5 A/B evaluation on held-out tasks (${config.evalPerArm} per arm)`);
    // The version that ships: the best RL version by validation, not necessarily the last.
    const shipped = chooseShipped(config, await publishedVersions(store, demoPolicyName), rl.validation);
    const final = shipped.version;
    progress.line(describeChoice(shipped, rl.validation));
    const evalRun = await evaluate(config, {
      store,
      progress,
      client: services.client,
      start: warm.version,
      final,
      last: shipped.last,
      catchUp: services.catchUp,
      stop,
    });
    // The verifier's reward, as the demo's success is the verifier's pass (RULER may score RL rounds).
    const { report: ab } = await loadAbReport(store, evalRun.experimentId, { reward: 'verifier' });
    end();

    end = phase('report', '5/5 summary and the console export');
    const summary: DemoSummary = {
      config,
      seconds: { ...seconds, report: 0, total: 0 },
      store: { target: store.target, driver: store.driver },
      dataDir: paths.dataDir,
      consoleExport: join(resolve(paths.console), 'index.html'),
      console: {
        command: `EDGERL_DATA_DIR=${paths.store} npx edgerl console --model ${paths.model}`,
        url: `http://127.0.0.1:${defaultConsolePort}/console`,
      },
      policy: demoPolicyName,
      startVersion: warm.version.adapterName,
      finalVersion: final.adapterName,
      lastVersion: shipped.last.adapterName,
      shipRule: shipped.rule,
      validation: rl.validation,
      steps: await stepRewards(store, demoPolicyName),
      rounds: rl.rounds,
      reused: { model: !services.modelCreated, warmStart: warm.reused, rounds: rl.reusedRounds },
      warmStart: {
        steps: warm.steps,
        ...(warm.copy ? { copy: warm.copy, copyReached: warm.copyReached === true } : {}),
      },
      experimentId: evalRun.experimentId,
      ab,
      counts: await storeCounts(store),
      queries: demoQueries(evalRun.experimentId),
    };
    end();
    const done: DemoSummary = {
      ...summary,
      seconds: { ...seconds, total: (performance.now() - began) / 1000 },
    };
    const exported = await writeConsoleExport(store, paths.console, {
      tokenText: await tokenTextFromModel(paths.model),
    });
    await writeAtomically(paths.summary, `${JSON.stringify(done, null, 2)}\n`);
    progress.line(`console export written to ${exported.index} (${exported.files} files)`);
    return done;
  } finally {
    await services?.close();
    await store.close();
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}

/** RULER joins the verifier when a judge is configured (EDGERL_JUDGE_BASE_URL), as in `edgerl train`. */
function judgeFromEnv(env: NodeJS.ProcessEnv): JudgeDeps | undefined {
  if (!env.EDGERL_JUDGE_BASE_URL) return undefined;
  const config = rulerConfigFromEnv(env);
  return { config, client: createJudgeClient(config), cache: createMemoryRulerCache() };
}
