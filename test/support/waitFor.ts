/**
 * Polls `check` until it returns a value (not undefined, not false) and returns it; fails with `what` after
 * `timeoutMs` (generous: slow CI machines). Every 5 ms by default: a check is mostly a read of memory, and each
 * wait at 20 ms cost its test 10 ms on average; a check that asks a server over HTTP polls less often (`everyMs`).
 */
export const waitFor = async <A>(
  what: string,
  check: () => A | undefined | false | Promise<A | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 5
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
