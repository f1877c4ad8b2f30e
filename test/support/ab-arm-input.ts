// An A/B report's arm input for pure report tests: every trajectory finished with the given rewards,
// 3 turns and 100 ms on average, half the traffic; overrides change any field.
import type { AbArmInput } from '../../experiments/ab-report.ts';

export function abArmInput(name: string, rewards: number[], overrides: Partial<AbArmInput> = {}): AbArmInput {
  return {
    name,
    adapterName: name,
    weight: 0.5,
    running: 0,
    finished: rewards.length,
    truncated: 0,
    error: 0,
    turnCountMean: 3,
    latencyMsMean: 100,
    rewards,
    ...overrides,
  };
}
