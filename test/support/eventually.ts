/**
 * Retries an assertion until it passes or the deadline passes (then rethrows its last failure).
 * Tests wait on conditions, never on sleeps.
 */
export async function eventually<T>(
  assertion: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    until = () => false,
  }: {
    timeoutMs?: number;
    intervalMs?: number;
    /** A failure that will not pass by waiting: rethrown at once. */
    until?: (error: unknown) => boolean;
  } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (until(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
