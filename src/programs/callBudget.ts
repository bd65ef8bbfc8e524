import { type Clock, Duration, Effect, Exit, Fiber } from "effect"

/**
 * Time budgets of calls, kept by one timer per clock rather than by a race per call.
 *
 * Every time bound in Effect (`timeout`, `raceFirst`…) forks two fibers; a call's budget was the largest part
 * of its cost in fibers (see bench/README.md). Here a call runs in one fiber of its own, and the clock's
 * one timer fiber sleeps until the soonest deadline of the calls in flight, then interrupts those whose budget
 * ran out. The timer sleeps on the call's `Clock`, so a `TestClock` drives it as it drove the race; it ends
 * when no call is left (a pending sleep would keep the process alive).
 */

/** A call in flight, as its clock's timer sees it. */
interface Budgeted {
  /** Clock time past which the call is cut. */
  readonly deadline: number
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  /** Set by the timer when it cut the call: the call's interruption is then its timeout. */
  cut: boolean
}

interface Timer {
  readonly clock: Clock.Clock
  readonly calls: Set<Budgeted>
  /** When the running timer fiber wakes next (Infinity: none runs). */
  wakeAt: number
  /** Each new timer fiber takes the next number; one that finds another number current ends. */
  generation: number
  fiber: Fiber.RuntimeFiber<void> | undefined
}

const timers = new WeakMap<Clock.Clock, Timer>()

const timerOf = (clock: Clock.Clock): Timer => {
  const known = timers.get(clock)
  if (known !== undefined) return known
  const timer: Timer = { clock, calls: new Set(), wakeAt: Infinity, generation: 0, fiber: undefined }
  timers.set(clock, timer)
  return timer
}

/** Cuts the calls past their deadline, then sleeps until the soonest of the others; ends when none is left. */
const tick = (timer: Timer, generation: number): Effect.Effect<void> =>
  Effect.withFiberRuntime((self) => {
    if (timer.generation !== generation) return Effect.void
    const now = timer.clock.unsafeCurrentTimeMillis()
    let soonest = Infinity
    for (const call of timer.calls) {
      if (call.deadline <= now) {
        timer.calls.delete(call)
        call.cut = true
        call.fiber.unsafeInterruptAsFork(self.id())
      } else if (call.deadline < soonest) soonest = call.deadline
    }
    timer.wakeAt = soonest
    if (soonest === Infinity) {
      timer.fiber = undefined
      return Effect.void
    }
    return Effect.flatMap(timer.clock.sleep(Duration.millis(soonest - now)), () => tick(timer, generation))
  })

/** A new timer fiber (the running one, if any, is interrupted): forked from the caller, so on its clock. */
const restart = (timer: Timer): Effect.Effect<void> => {
  timer.fiber?.unsafeInterruptAsFork(timer.fiber.id())
  const generation = ++timer.generation
  timer.wakeAt = -Infinity
  // Interruptible whatever the caller's region: `release` must be able to stop it (a pending sleep keeps a process alive).
  return Effect.map(Effect.forkDaemon(Effect.interruptible(tick(timer, generation))), (fiber) => {
    if (timer.generation === generation) timer.fiber = fiber
  })
}

/** Stops the timer when no call is left: nothing is pending on the clock any more. */
const release = (timer: Timer, call: Budgeted): void => {
  timer.calls.delete(call)
  if (timer.calls.size > 0) return
  timer.generation++
  timer.wakeAt = Infinity
  timer.fiber?.unsafeInterruptAsFork(timer.fiber.id())
  timer.fiber = undefined
}

/**
 * The call's exit once it ends: `fiber.await` without its canceler, which only takes the observer off again and costs
 * every wait an `onInterrupt` (a mask, a match and a continuation). An interrupted wait interrupts the call and waits
 * for it (withCallBudget), and the fiber ignores the resume of a wait it has left.
 */
const exitOf = <A>(fiber: Fiber.RuntimeFiber<A>): Effect.Effect<Exit.Exit<A>> =>
  Effect.async((resume) => {
    fiber.addObserver((exit) => resume(Effect.succeed(exit)))
  })

export interface CallBudget {
  /**
   * Starts the budget of the current fiber (the call's own): it is cut `ms` from now on the clock. Called
   * inside the call, once its first request goes out.
   */
  readonly start: (ms: number) => Effect.Effect<void>
}

/**
 * Runs `call` in a fiber of its own, under a budget it starts itself (`budget.start`, when its first request
 * goes out, so that waiting for a permit does not count). Succeeds with the call's value, or with
 * `onTimeout()` when the budget ran out first (the call is interrupted, which aborts its request, and awaited).
 * Interrupting the caller interrupts the call and waits for it.
 */
export const withCallBudget = <A>(
  clock: Clock.Clock,
  call: (budget: CallBudget) => Effect.Effect<A>,
  onTimeout: () => A
): Effect.Effect<A> => {
  const timer = timerOf(clock)
  let entry: Budgeted | undefined
  const budget: CallBudget = {
    // Uninterruptible: a call added to the set always has a timer started for it, if it needs one.
    start: (ms) =>
      Effect.uninterruptible(Effect.withFiberRuntime((fiber) => {
        if (entry !== undefined) return Effect.void
        const deadline = clock.unsafeCurrentTimeMillis() + ms
        entry = { deadline, fiber, cut: false }
        timer.calls.add(entry)
        return deadline < timer.wakeAt ? restart(timer) : Effect.void
      }))
  }
  const ended = () => {
    if (entry !== undefined) release(timer, entry)
  }
  // One mask for the fork and the wait, the wait matched inside it (an `onInterrupt` around the wait is one more mask,
  // match and continuation per call): only the wait is interruptible here, and the call in its own fiber.
  return Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(call(budget))), (fiber) =>
      Effect.matchCauseEffect(restore(exitOf(fiber)), {
        // The wait itself fails only when the caller is interrupted: the call is interrupted too, and waited for.
        onFailure: (cause) => Effect.zipRight(Effect.ensuring(Fiber.interrupt(fiber), Effect.sync(ended)), Effect.failCause(cause)),
        onSuccess: (exit) => {
          ended()
          if (Exit.isSuccess(exit)) return exit
          // A call the timer cut timed out, whatever its cleanup then did (as the loser of a race, its exit is dropped).
          return entry?.cut === true ? Effect.sync(onTimeout) : Effect.failCause(exit.cause)
        }
      }))
  )
}
