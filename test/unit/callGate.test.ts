import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeCallGate } from "../../src/services/callGate.js"

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
