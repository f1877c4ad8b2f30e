// Every named query function of the store, in one table: the Store binds each one to its database
// (so callers never import db/store/*.ts, and a function added here is on the Store at once).
// Each takes the drizzle database first; the table leaves out raw SQL and migrations, which take
// other handles (see store.ts).
import { abArmOutcomes } from './store/ab-arm-outcomes.ts';
import { appendConversation } from './store/append-conversation.ts';
import { appendTurn } from './store/append-turn.ts';
import { appendFinalTurns, appendTurns } from './store/append-turns.ts';
import { claimGroups } from './store/claim-groups.ts';
import { countClaimableGroups } from './store/count-claimable-groups.ts';
import { countQueuedEpisodes } from './store/count-queued-episodes.ts';
import { unclaimableGroups } from './store/unclaimable-groups.ts';
import { createExperiment } from './store/create-experiment.ts';
import { createGroup } from './store/create-group.ts';
import { getDefaultVersion, resolvePolicyVersion, setDefaultVersion } from './store/default-version.ts';
import { getExperiment, listExperiments, setArmWeights, stopExperiment } from './store/experiments.ts';
import { finishTrajectory } from './store/finish-trajectory.ts';
import { getAbExperiment } from './store/get-ab-experiment.ts';
import { getGroup } from './store/get-group.ts';
import { getPolicyVersion } from './store/get-policy-version.ts';
import { getTrajectory } from './store/get-trajectory.ts';
import { getTrajectoryHead } from './store/get-trajectory-head.ts';
import { groupTurnsAfter } from './store/group-turns-after.ts';
import { ingestTrajectories } from './store/ingest-trajectories.ts';
import { releaseGroups, renewLease } from './store/leases.ts';
import { replayTrajectories } from './store/replay-trajectories.ts';
import { latestJudgeScores } from './store/latest-judge-scores.ts';
import { listAbExperiments } from './store/list-ab-experiments.ts';
import { listGroups } from './store/list-groups.ts';
import { getTask, listTasks } from './store/list-tasks.ts';
import { listTrainingRuns } from './store/list-training-runs.ts';
import { markGroupComplete, markGroupFailed } from './store/mark-group.ts';
import { markGroupsTrained } from './store/mark-groups-trained.ts';
import { reclaimGroups, releaseOwnerLeases } from './store/owner-leases.ts';
import { createPolicy, getPolicy } from './store/policies.ts';
import { policyLineage } from './store/policy-lineage.ts';
import { releasePolicyLease, renewPolicyLease, takePolicyLease } from './store/policy-leases.ts';
import { publishPolicyVersion, registerPolicyVersion, retirePolicyVersion } from './store/policy-versions.ts';
import { promoteArm } from './store/promote-arm.ts';
import {
  listPublications,
  recordPublication,
  servableVersions,
  servingReplicas,
} from './store/publications.ts';
import { markGroupUnscored, recordJudgeScores } from './store/record-judge-scores.ts';
import { removePublication, routableVersions } from './store/routable-versions.ts';
import { resolveVersionRef } from './store/resolve-version-ref.ts';
import { rollbackDefaultVersion } from './store/rollback-default-version.ts';
import { sameTaskAnswers } from './store/same-task-answers.ts';
import { groupFilterOptions, searchGroups } from './store/search-groups.ts';
import { selectTrajectories } from './store/select-trajectories.ts';
import { setFinalRewards } from './store/set-final-rewards.ts';
import { setTrajectoryTools } from './store/set-trajectory-tools.ts';
import { startGroup } from './store/start-group.ts';
import { startTrajectory } from './store/start-trajectory.ts';
import { commitTrainingCycle, recordPublishFailure } from './store/training-cycle.ts';
import { finishTrainingRun, recordTrainingStep, startTrainingRun } from './store/training-runs.ts';
import { trainingRunSteps } from './store/training-run-steps.ts';
import { sweepTrajectories } from './store/sweep-trajectories.ts';
import { claimTrajectory } from './store/claim-trajectory.ts';
import { beatTrajectories, claimTrajectories, releaseTrajectories } from './store/trajectory-leases.ts';
import { turnsAfter } from './store/turns-after.ts';
import { upsertTask, upsertTasks } from './store/upsert-tasks.ts';
import { versionSplitRewards } from './store/version-split-rewards.ts';

export const storeFunctions = {
  // Tasks
  upsertTasks,
  upsertTask,
  getTask,
  listTasks,
  // Episodes
  createGroup,
  startGroup,
  startTrajectory,
  setTrajectoryTools,
  appendTurn,
  appendTurns,
  appendFinalTurns,
  appendConversation,
  finishTrajectory,
  ingestTrajectories,
  getTrajectory,
  getTrajectoryHead,
  turnsAfter,
  getGroup,
  listGroups,
  markGroupComplete,
  markGroupFailed,
  claimTrajectory,
  claimTrajectories,
  beatTrajectories,
  releaseTrajectories,
  sweepTrajectories,
  countQueuedEpisodes,
  // Scoring and training
  recordJudgeScores,
  markGroupUnscored,
  setFinalRewards,
  selectTrajectories,
  replayTrajectories,
  claimGroups,
  countClaimableGroups,
  unclaimableGroups,
  renewLease,
  releaseGroups,
  reclaimGroups,
  releaseOwnerLeases,
  markGroupsTrained,
  commitTrainingCycle,
  recordPublishFailure,
  startTrainingRun,
  recordTrainingStep,
  finishTrainingRun,
  takePolicyLease,
  renewPolicyLease,
  releasePolicyLease,
  // Policies and versions
  createPolicy,
  getPolicy,
  registerPolicyVersion,
  publishPolicyVersion,
  retirePolicyVersion,
  getPolicyVersion,
  resolveVersionRef,
  setDefaultVersion,
  getDefaultVersion,
  rollbackDefaultVersion,
  resolvePolicyVersion,
  versionSplitRewards,
  // Fleet publication
  recordPublication,
  listPublications,
  servableVersions,
  servingReplicas,
  routableVersions,
  removePublication,
  // Experiments
  createExperiment,
  getExperiment,
  getAbExperiment,
  listExperiments,
  listAbExperiments,
  setArmWeights,
  stopExperiment,
  promoteArm,
  abArmOutcomes,
  // Read-only views for the console (console/)
  listTrainingRuns,
  trainingRunSteps,
  searchGroups,
  groupFilterOptions,
  groupTurnsAfter,
  latestJudgeScores,
  policyLineage,
  sameTaskAnswers,
} as const;
