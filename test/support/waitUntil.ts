/**
 * Polls `condition` until it holds, failing with `what` after `timeoutMs` (generous: slow CI machines). Every 5 ms:
 * a check is a read of memory, and each wait at 20 ms cost its test 10 ms on average.
 */
export const waitUntil = async (condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
