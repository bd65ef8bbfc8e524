/**
 * At most `size` holders at once, the others served in their order as permits come back: a counter and a line of
 * waiting callbacks, not a Semaphore or a Queue of tokens. Every call (CallGate) and every file of every run (the
 * run store's writes) passes through one, and both of those cost several fiber operations each under an
 * uninterruptible mask; a Semaphore also wakes every waiter on each release.
 */
export interface PermitLine {
  /** Takes a permit if one is free and nobody is waiting for it. */
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
  // The waiting starts from `head` on: taking the first moves `head`, not every other start (as `shift` would: a
  // long line then costs its length squared). The taken part is cut off once it is the larger half.
  const waiting: Array<() => void> = []
  let head = 0
  const takeFirst = () => {
    const first = waiting[head]
    if (first === undefined) return undefined
    head++
    if (head === waiting.length || (head > 64 && head * 2 > waiting.length)) {
      waiting.splice(0, head)
      head = 0
    }
    return first
  }
  // True while `leave` hands permits to the waiting. A start may give its permit straight back (a write Node
  // refuses at once): that `leave` only counts it, and the loop hands it on, rather than a call within a call per
  // waiter (a stack overflow down a long line). Meanwhile a permit can be free with starts waiting: `tryEnter`
  // leaves it to them.
  let handing = false
  const tryEnter = () => {
    if (free === 0 || head < waiting.length) return false
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
      const at = waiting.indexOf(start, head)
      if (at !== -1) waiting.splice(at, 1)
      return at !== -1
    },
    leave: () => {
      free++
      if (handing) return
      handing = true
      try {
        for (let next = takeFirst(); next !== undefined; next = free > 0 ? takeFirst() : undefined) {
          free--
          next()
        }
      } finally {
        handing = false
      }
    }
  }
}
