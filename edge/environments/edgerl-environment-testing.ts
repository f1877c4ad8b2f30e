// The public entry `edgerl/environment/testing`: what an environment's own tests need to play an
// episode offline, the real episode loop with a scripted policy (a test double) and an in-memory sink.
// Kept apart from `edgerl/environment` so that production code does not pull in test doubles.
export { InMemoryTrajectorySink } from '../episode/in-memory-trajectory-sink.ts';
export { type EpisodeResult, type RunEpisodeOptions, runEpisode } from '../episode/run-episode.ts';
export {
  type ScriptedCall,
  ScriptedPolicyClient,
  type ScriptedStep,
  textReply,
  toolCallReply,
} from '../policy/scripted-policy-client.ts';
