import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberId } from "effect"
import { makeCallGate } from "../../src/services/callGate.js"
import { nextTurn, StepScheduler } from "../support/stepScheduler.js"

describe("CallGate", () => {
  it.live("lets `permits` calls in at once, serves the waiters in order, and an interrupted waiter takes no permit away", () =>
    Effect.gen(function*() {
      const gate = yield* makeCallGate(2)
      const order: Array<string> = []
      const running = { now: 0, most: 0 }
      const releases = new Map<string, Deferred.Deferred<void>>()
      const call = (name: string) =>
        Effect.gen(function*() {
          const release = yield* Deferred.make<void>()
          releases.set(name, release)
          order.push(name)
          running.now++
          running.most = Math.max(running.most, running.now)
          yield* Deferred.await(release)
          running.now--
        }).pipe(gate.withPermit)
      const until = (condition: () => boolean) => Effect.sleep("1 millis").pipe(Effect.repeat({ until: condition }))
      const end = (name: string) => Effect.suspend(() => Deferred.succeed(releases.get(name)!, undefined))

      const fibers = new Map<string, Fiber.RuntimeFiber<void>>()
      for (const name of ["a", "b", "c", "d", "e"]) {
        fibers.set(name, yield* Effect.fork(call(name)))
        yield* Effect.yieldNow()
      }
      yield* until(() => order.length === 2)
      expect(order).toEqual(["a", "b"])

      // c gives up while waiting: the next permit goes to d, and none is lost.
      yield* Fiber.interrupt(fibers.get("c")!)
      yield* end("a")
      yield* until(() => order.length === 3)
      expect(order).toEqual(["a", "b", "d"])
      yield* end("b")
      yield* until(() => order.length === 4)
      expect(order).toEqual(["a", "b", "d", "e"])
      yield* end("d")
      yield* end("e")
      for (const name of ["a", "b", "d", "e"]) yield* Fiber.join(fibers.get(name)!)
      expect(running.most).toBe(2)

      // Both permits are back: two new calls get in at once.
      const f = yield* Effect.fork(call("f"))
      const g = yield* Effect.fork(call("g"))
      yield* until(() => order.length === 6)
      yield* end("f")
      yield* end("g")
      yield* Fiber.join(f)
      yield* Fiber.join(g)
      expect(running.most).toBe(2)
    }))
})

/**
 * A gate of `permits` on a scheduler the test turns by hand, and calls through it that hold their permit until
 * ended. `inFlight`/`most` count the calls between their start and their end, as a provider would see them.
 */
const steppedGate = (permits: number) => {
  const scheduler = new StepScheduler()
  const gate = Effect.runSync(makeCallGate(permits))
  const seen = { inFlight: 0, most: 0, started: [] as Array<string> }
  const call = (name: string) => {
    const release = Deferred.unsafeMake<void>(FiberId.none)
    const body = Effect.acquireUseRelease(
      Effect.sync(() => {
        seen.started.push(name)
        seen.most = Math.max(seen.most, ++seen.inFlight)
      }),
      () => Deferred.await(release),
      () => Effect.sync(() => seen.inFlight--)
    )
    return { fiber: scheduler.run(gate.withPermit(body)), end: () => Deferred.unsafeDone(release, Exit.void) }
  }
  /** Lets every fiber run, and the permits given back on the next turn reach their waiters, until all is still. */
  const settle = async () => {
    scheduler.settle()
    await nextTurn()
    scheduler.settle()
  }
  /** Exactly `permits` new calls get in at once, and one more waits: no permit was lost, none doubled. */
  const expectFullCapacity = async () => {
    const before = seen.started.length
    const probes = Array.from({ length: permits + 1 }, (_, i) => call(`probe${i}`))
    await settle()
    expect(seen.inFlight).toBe(permits)
    expect(seen.started.length - before).toBe(permits)
    for (const probe of probes) probe.end()
    await settle()
    await settle()
    expect(seen.started.length - before).toBe(permits + 1)
    expect(seen.inFlight).toBe(0)
    expect(seen.most).toBeLessThanOrEqual(permits)
  }
  return { scheduler, call, settle, seen, expectFullCapacity }
}

/** Runs `scenario(k)` for k = 0, 1, … until it says the step it aimed at was past the end; returns how many ran. */
const everyStep = async (scenario: (k: number) => Promise<"past the end" | "done">) => {
  for (let k = 0; k < 500; k++) {
    try {
      if ((await scenario(k)) === "past the end") return k
    } catch (e) {
      throw new Error(`at step ${k}: ${String(e)}`, { cause: e })
    }
  }
  throw new Error("the scenario never ran to its end")
}

describe("CallGate under interruption, at every step of the fiber", () => {
  it("a waiter interrupted after the line handed it the permit, before its call starts, gives the permit back", async () => {
    const steps = await everyStep(async (k) => {
      const g = steppedGate(1)
      const holder = g.call("holder")
      const waiter = g.call("waiter")
      await g.settle()
      holder.end()
      // The holder gives the permit back on the next turn: the line hands it to the waiter, which is to resume.
      g.scheduler.settle()
      await nextTurn()
      g.scheduler.pauseAfter(waiter.fiber, k)
      g.scheduler.step()
      const reached = !g.scheduler.pausePending
      waiter.fiber.unsafeInterruptAsFork(FiberId.none)
      await g.settle()
      expect(g.seen.started.filter((name) => name === "waiter").length).toBeLessThanOrEqual(1)
      await g.expectFullCapacity()
      return reached ? "done" : "past the end"
    })
    expect(steps).toBeGreaterThan(5)
  })

  it("a waiter interrupted in the line, and handed the permit at any step of its leaving, passes it on", async () => {
    const steps = await everyStep(async (k) => {
      const g = steppedGate(1)
      const holder = g.call("holder")
      const waiter = g.call("waiter")
      const next = g.call("next")
      await g.settle()
      // The holder ends: its permit comes back on the next turn, while the waiter is in the middle of leaving.
      holder.end()
      g.scheduler.settle()
      waiter.fiber.unsafeInterruptAsFork(FiberId.none)
      g.scheduler.pauseAfter(waiter.fiber, k)
      g.scheduler.step()
      const reached = !g.scheduler.pausePending
      await nextTurn()
      await g.settle()
      expect(g.seen.started).toEqual(["holder", "next"])
      next.end()
      await g.settle()
      await g.expectFullCapacity()
      return reached ? "done" : "past the end"
    })
    expect(steps).toBeGreaterThan(3)
  })

  it("a call interrupted at any step of its way in, as the permit comes back, holds none after", async () => {
    for (const interrupted of [true, false]) {
      const steps = await everyStep(async (k) => {
        const g = steppedGate(1)
        const holder = g.call("holder")
        await g.settle()
        holder.end()
        g.scheduler.settle()
        // The call starts while the permit is still out; at step k the permit comes back, then it is interrupted.
        const late = g.call("late")
        g.scheduler.pauseAfter(late.fiber, k)
        g.scheduler.step()
        const reached = !g.scheduler.pausePending
        await nextTurn()
        if (interrupted) late.fiber.unsafeInterruptAsFork(FiberId.none)
        await g.settle()
        const lateRan = g.seen.started.includes("late")
        if (!interrupted) expect(lateRan).toBe(true)
        if (lateRan) late.end()
        await g.settle()
        await g.expectFullCapacity()
        return reached ? "done" : "past the end"
      })
      expect(steps).toBeGreaterThan(5)
    }
  })

  it("many waiters interrupted at once, as permits come back, leave the others served in order", async () => {
    const g = steppedGate(2)
    const holders = [g.call("a"), g.call("b")]
    const waiters = ["w1", "w2", "w3", "w4", "w5", "w6"].map((name) => g.call(name))
    await g.settle()
    expect(g.seen.started).toEqual(["a", "b"])
    // In one turn: both holders end and four waiters are interrupted, before any fiber has run.
    for (const holder of holders) holder.end()
    for (const at of [0, 2, 3, 5]) waiters[at]?.fiber.unsafeInterruptAsFork(FiberId.none)
    await g.settle()
    expect(g.seen.started).toEqual(["a", "b", "w2", "w5"])
    expect(g.seen.inFlight).toBe(2)
    waiters[1]?.end()
    waiters[4]?.end()
    await g.settle()
    await g.expectFullCapacity()
    // Everything at once, holders and waiters alike, from another fiber.
    const more = ["c", "d", "x1", "x2", "x3"].map((name) => g.call(name))
    await g.settle()
    const interrupter = g.scheduler.run(Fiber.interruptAll(more.map((call) => call.fiber)))
    await g.settle()
    expect(interrupter.unsafePoll()?._tag).toBe("Success")
    expect(g.seen.inFlight).toBe(0)
    await g.expectFullCapacity()
  })
})
