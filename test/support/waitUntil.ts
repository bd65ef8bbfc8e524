/** Polls `condition` until it holds, failing with `what` after `timeoutMs` (generous: slow CI machines). */
export const waitUntil = async (condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
