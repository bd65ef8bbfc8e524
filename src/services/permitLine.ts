/**
 * At most `size` holders at once, the others served in their order as permits come back: a counter and a line of
 * waiting callbacks, not a Semaphore or a Queue of tokens. Every call (CallGate) and every file of every run (the
 * run store's writes) passes through one, and both of those cost several fiber operations each under an
 * uninterruptible mask; a Semaphore also wakes every waiter on each release.
 */
export interface PermitLine {
  /** Takes a permit if one is free. */
  readonly tryEnter: () => boolean
  /** Runs `start` now if a permit is free, else when one is handed to it. */
  readonly enter: (start: () => void) => void
  /** Takes a waiting `start` out of the line; false when it has already been handed a permit. */
  readonly withdraw: (start: () => void) => boolean
  /** Gives a permit back (to the first waiting `start`, if any). */
  readonly leave: () => void
}

export const makePermitLine = (size: number): PermitLine => {
  let free = size
  const waiting: Array<() => void> = []
  const tryEnter = () => {
    if (free === 0) return false
    free--
    return true
  }
  return {
    tryEnter,
    enter: (start) => {
      if (tryEnter()) start()
      else waiting.push(start)
    },
    withdraw: (start) => {
      const at = waiting.indexOf(start)
      if (at !== -1) waiting.splice(at, 1)
      return at !== -1
    },
    leave: () => {
      const next = waiting.shift()
      if (next === undefined) free++
      else next()
    }
  }
}
