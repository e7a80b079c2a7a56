// The near-limit threshold, computed in float32 as upstream does (spec §2.3, §6).

/**
 * floor(float32(limit) × float32(ratio)). Upstream multiplies two float32 values, so e.g. 0.8 × 20 gives 16 and
 * not the 15.999… a float64 product of float32(0.8) would. Clamped to [0, limit] so that a NEAR_LIMIT_RATIO above 1
 * cannot make `limit − max(near, before)` negative (upstream's uint64 subtraction wraps there; §6 says clamp).
 */
export function nearLimitThreshold(limit: number, ratio: number): number {
  const product = Math.fround(Math.fround(limit) * Math.fround(ratio));
  const near = Math.floor(product);
  if (!(near > 0)) return 0;
  return near > limit ? limit : near;
}
