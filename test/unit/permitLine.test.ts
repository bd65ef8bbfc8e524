import { describe, expect, it } from "vitest"
import { makePermitLine, type PermitLine } from "../../src/services/permitLine.js"

/** A line and named starts on it that record when they run; `held` counts the permits out. */
const lineOf = (size: number) => {
  const line = makePermitLine(size)
  const started: Array<string> = []
  const starts = new Map<string, () => void>()
  const startOf = (name: string) => {
    const start = () => void started.push(name)
    starts.set(name, start)
    return start
  }
  const enter = (...names: ReadonlyArray<string>) => {
    for (const name of names) line.enter(startOf(name))
  }
  const start = (name: string) => starts.get(name) ?? (() => undefined)
  return { line, started, enter, start }
}

/** How many permits are free: taken one by one until none is, then given back. */
const freePermits = (line: PermitLine) => {
  let free = 0
  while (free < 1_000 && line.tryEnter()) free++
  for (let i = 0; i < free; i++) line.leave()
  return free
}

describe("permit line", () => {
  it("holds at most `size` at once and hands each permit given back to the first waiting, in order", () => {
    const { line, started, enter } = lineOf(2)
    enter("a", "b", "c", "d", "e")
    expect(started).toEqual(["a", "b"])
    expect(line.tryEnter()).toBe(false)
    line.leave()
    expect(started).toEqual(["a", "b", "c"])
    line.leave()
    line.leave()
    expect(started).toEqual(["a", "b", "c", "d", "e"])
    expect(freePermits(line)).toBe(0)
    line.leave()
    line.leave()
    expect(freePermits(line)).toBe(2)
  })

  it("a start withdrawn from the line never runs and takes no permit; once handed one, it cannot be withdrawn", () => {
    const { line, started, enter, start } = lineOf(1)
    enter("a", "b", "c", "d")
    expect(line.withdraw(start("b"))).toBe(true)
    expect(line.withdraw(start("b"))).toBe(false)
    line.leave()
    expect(started).toEqual(["a", "c"])
    // c holds the permit now (d waits behind it): withdrawing c says so, and leaves the line and the count alone.
    expect(line.withdraw(start("c"))).toBe(false)
    expect(freePermits(line)).toBe(0)
    line.leave()
    expect(started).toEqual(["a", "c", "d"])
    line.leave()
    expect(freePermits(line)).toBe(1)
  })

  it("withdrawing many waiters at once, as permits come back, serves the rest in order and frees every permit", () => {
    const { line, started, enter, start } = lineOf(2)
    enter("a", "b", "w1", "w2", "w3", "w4", "w5", "w6")
    for (const name of ["w1", "w3", "w4", "w6"]) expect(line.withdraw(start(name))).toBe(true)
    line.leave()
    line.leave()
    expect(started).toEqual(["a", "b", "w2", "w5"])
    line.leave()
    line.leave()
    expect(freePermits(line)).toBe(2)
    // Every waiter withdrawn, then every holder gone: all the permits are free, and no more.
    enter("x", "y", "z1", "z2")
    for (const name of ["z1", "z2"]) expect(line.withdraw(start(name))).toBe(true)
    line.leave()
    line.leave()
    expect(started.slice(-2)).toEqual(["x", "y"])
    expect(freePermits(line)).toBe(2)
  })

  it("a start that withdraws others as it is handed its permit (a cancel that crosses a give-back) keeps the count", () => {
    const line = makePermitLine(1)
    const started: Array<string> = []
    const later = () => void started.push("later")
    const last = () => void started.push("last")
    // Handed the permit, the first waiter cancels the whole write: it withdraws the others and gives its permit back.
    const first = () => {
      started.push("first")
      expect(line.withdraw(later)).toBe(true)
      line.leave()
    }
    expect(line.tryEnter()).toBe(true)
    line.enter(first)
    line.enter(later)
    line.enter(last)
    line.leave()
    expect(started).toEqual(["first", "last"])
    line.leave()
    expect(freePermits(line)).toBe(1)
  })
})

describe("permit line, a long line", () => {
  it("starts that give their permit straight back (writes Node refuses at once) pass it down 50 000 waiters", () => {
    const line = makePermitLine(1)
    let ran = 0
    const refused = () => {
      ran++
      line.leave()
    }
    expect(line.tryEnter()).toBe(true)
    for (let i = 0; i < 50_000; i++) line.enter(refused)
    // Handed on by a loop, not by a call within a call per waiter: no stack overflow, every one run once.
    line.leave()
    expect(ran).toBe(50_000)
    expect(freePermits(line)).toBe(1)
    // A start that gives its permit back and enters again waits its turn behind those already waiting.
    const order: Array<string> = []
    expect(line.tryEnter()).toBe(true)
    line.enter(() => {
      order.push("first")
      line.leave()
      line.enter(() => void order.push("third"))
    })
    line.enter(() => {
      order.push("second")
      line.leave()
    })
    line.leave()
    expect(order).toEqual(["first", "second", "third"])
    line.leave()
    expect(freePermits(line)).toBe(1)
  })
})
