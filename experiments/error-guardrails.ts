// A guardrail users of experimentation platforms expect: an arm that ends in error significantly more
// often than the control is called out, whatever the metric says (two-proportion z-test on errors).
import type { AbArmInput } from './ab-report.ts';
import { formatP } from './format-numbers.ts';
import { twoProportionTest } from './statistics.ts';

export function errorGuardrails(arms: readonly AbArmInput[], alpha: number): string[] {
  const [control, ...treatments] = arms as [AbArmInput, ...AbArmInput[]];
  const controlEnded = endedCount(control);
  return treatments.flatMap((arm) => {
    const armEnded = endedCount(arm);
    if (controlEnded === 0 || armEnded === 0) return [];
    const result = twoProportionTest(control.error, controlEnded, arm.error, armEnded);
    if (!(result.difference > 0 && result.pValue < alpha)) return [];
    return [
      `${arm.name} ends in error more often than ${control.name}: ${((arm.error / armEnded) * 100).toFixed(1)}% vs ${(
        (control.error / controlEnded) * 100
      ).toFixed(1)}% (p ${formatP(result.pValue)}, two-proportion z-test).`,
    ];
  });
}

/** Finished, truncated or error. */
export function endedCount(arm: AbArmInput): number {
  return arm.finished + arm.truncated + arm.error;
}
