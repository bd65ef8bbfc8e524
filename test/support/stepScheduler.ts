import { Effect, type Fiber, type Scheduler } from "effect"

/**
 * A scheduler the test turns by hand, to put an interruption (or a permit given back) at an exact step of a
 * fiber: fibers forked with `run` go on only when the test calls `step`/`settle`, and `pauseAfter(fiber, k)` makes
 * that fiber yield once, after its next `k` operations (Effect's run loop asks the scheduler before each one).
 * While it is paused, the test can do what another fiber or a callback would do at that moment.
 */
export class StepScheduler implements Scheduler.Scheduler {
  private tasks: Array<Scheduler.Task> = []
  private pause: { readonly fiber: Fiber.RuntimeFiber<unknown, unknown>; left: number } | undefined

  scheduleTask(task: Scheduler.Task) {
    this.tasks.push(task)
  }

  shouldYield(fiber: Fiber.RuntimeFiber<unknown, unknown>): number | false {
    if (this.pause === undefined || this.pause.fiber !== fiber || this.pause.left-- > 0) return false
    this.pause = undefined
    return 0
  }

  /** Forks `effect` on this scheduler: it starts at the next step. */
  run<A, E>(effect: Effect.Effect<A, E>): Fiber.RuntimeFiber<A, E> {
    return Effect.runFork(effect, { scheduler: this, immediate: false })
  }

  /** `fiber` yields after its next `ops` operations, once. */
  pauseAfter(fiber: Fiber.RuntimeFiber<unknown, unknown>, ops: number) {
    this.pause = { fiber, left: ops }
  }

  /** Whether the pause set by `pauseAfter` has not been reached (the fiber waited or ended first). */
  get pausePending(): boolean {
    return this.pause !== undefined
  }

  /** Runs what is scheduled now (what it schedules waits for the next step). */
  step() {
    const tasks = this.tasks
    this.tasks = []
    for (const task of tasks) task()
  }

  /** Steps until nothing is scheduled: every fiber has ended or waits for something outside. */
  settle() {
    for (let steps = 0; this.tasks.length > 0; steps++) {
      if (steps === 10_000) throw new Error("StepScheduler: the fibers never settle")
      this.step()
    }
  }
}

/** One turn of Node's event loop: what `setImmediate` scheduled before it has run (the call gate's give-back). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
