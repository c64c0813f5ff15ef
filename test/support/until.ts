/**
 * Polls `check` every `intervalMs` until it gives a truthy value (returned), or throws after `timeoutMs` naming
 * what was awaited and the last error `check` threw. For the container and cluster tests, whose servers take
 * seconds to come up or converge.
 */
export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await check().catch((err) => ((last = err), null));
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (last error: ${String(last)})` : ""}`);
    await Bun.sleep(intervalMs);
  }
}
