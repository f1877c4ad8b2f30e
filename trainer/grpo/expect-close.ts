// Test helper: element-wise comparison with a stated tolerance that reports the largest difference.
import { expect } from 'vitest';

export function expectClose(actual: ArrayLike<number>, expected: readonly number[], tolerance: number): void {
  expect(actual.length, 'length').toBe(expected.length);
  let worst = 0;
  let worstIndex = -1;
  expected.forEach((value, index) => {
    const difference = Math.abs((actual[index] as number) - value);
    if (!(difference <= worst)) {
      worst = difference;
      worstIndex = index;
    }
  });
  const message = `largest |difference| ${worst} at index ${worstIndex}: got [${Array.from(actual)}], want [${expected}]`;
  expect(worst <= tolerance, message).toBe(true);
}
