// Deterministic traffic splitting for A/B experiments: a stickiness key (a user, a session, a group)
// is hashed with the experiment id to a number u in [0, 1), and u picks the arm whose slice of the
// cumulative weights contains it. The same key always lands on the same arm while weights stay put;
// salting with the experiment id makes different experiments split independently.
// Hash: SHA-256 (FIPS 180-4) via Web Crypto, available alike in workerd and Node; the first 52 bits
// become u, so u has a float64's full resolution. Bucketing by hash(salt + key) over cumulative
// weights is the scheme of common feature-flag tools (e.g. GrowthBook's `hash(seed + value)`).

/** u in [0, 1) from SHA-256(`${salt}:${key}`). */
export async function unitHash(salt: string, key: string): Promise<number> {
  const bytes = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${salt}:${key}`)),
  );
  // 52 bits: 6 whole bytes (48 bits) and the high nibble of the seventh.
  let high = 0;
  for (let i = 0; i < 6; i++) high = high * 256 + (bytes[i] as number);
  const value = high * 16 + ((bytes[6] as number) >> 4);
  return value / 2 ** 52;
}

/**
 * The index of the arm whose cumulative-weight interval holds `u` (u in [0, 1)): arm i gets
 * [W_{i-1}/W, W_i/W) where W_i is the sum of the first i+1 weights. Zero-weight arms get none.
 */
export function armIndex(weights: readonly number[], u: number): number {
  if (!(u >= 0 && u < 1)) throw new RangeError(`u must be in [0, 1), got ${u}`);
  const total = weights.reduce((sum, weight) => {
    if (!(weight >= 0 && Number.isFinite(weight)))
      throw new RangeError(`weights must be >= 0, got ${weight}`);
    return sum + weight;
  }, 0);
  if (!(total > 0)) throw new RangeError('at least one weight must be above 0');
  const target = u * total;
  let cumulative = 0;
  let last = -1;
  for (const [index, weight] of weights.entries()) {
    if (weight === 0) continue;
    cumulative += weight;
    last = index;
    if (target < cumulative) return index;
  }
  // Rounding can leave target == total for u just below 1: it belongs to the last weighted arm.
  return last;
}

/**
 * The arm `stickinessKey` lands on, with the arms in the order the router reads them
 * (`store.getExperiment`: by name, so an arm's slice does not depend on insertion order). Undefined
 * only when no arm has a weight above 0.
 */
export async function pickArm<Arm extends { readonly weight: number }>(
  experimentId: string,
  arms: readonly Arm[],
  stickinessKey: string,
): Promise<Arm | undefined> {
  if (!arms.some((arm) => arm.weight > 0)) return undefined;
  return arms[
    armIndex(
      arms.map((arm) => arm.weight),
      await unitHash(experimentId, stickinessKey),
    )
  ];
}
