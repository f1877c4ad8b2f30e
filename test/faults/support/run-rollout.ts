// The real `edgerl rollout` as a child process (node bin/edgerl.js) against a test edge: its exit
// code and output. The child ends on its own (its --timeout bounds the wait); nothing else is started.
import { testApiKey } from '../../edge/support/edge-harness.ts';
import { type EdgerlRun, runEdgerl } from '../../support/run-edgerl.ts';

/** Runs `edgerl rollout` as its own process against the harness edge. */
export async function runRollout(edgeUrl: string, args: readonly string[]): Promise<EdgerlRun> {
  return runEdgerl(['rollout', '--edge-url', edgeUrl, '--interval', '50', '--timeout', '120', ...args], {
    env: { ...process.env, EDGERL_EDGE_API_KEY: testApiKey },
  });
}
