import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { importsOf } from "../support/sourceModules.js"

// The e2e tier spawns the built CLI and server; its workers load nothing of the app (each worker loaded all of it
// again, ~2.8 CPU-s, on top of the unit workers). A test that runs the app in-process belongs in test/unit/.

const TEST = path.resolve(import.meta.dirname, "..")
const SRC = path.resolve(TEST, "../src")

/** The files the relative, not type-only imports of `file` load (`./x.js` → `x.ts`); packages are left out. */
const loadedBy = (file: string): ReadonlyArray<string> =>
  importsOf(fs.readFileSync(file, "utf8"))
    .filter((i) => !i.typeOnly && i.specifier.startsWith("."))
    .map((i) => path.resolve(path.dirname(file), i.specifier).replace(/\.js$/, ".ts"))

/** Every src/ module `entry` reaches through the test files it imports, as "test file -> src module". */
const srcReachedFrom = (entry: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const reached: Array<string> = []
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    for (const target of loadedBy(file)) {
      if (target.startsWith(`${SRC}${path.sep}`)) reached.push(`${path.relative(TEST, file)} -> ${path.relative(SRC, target)}`)
      else if (target.startsWith(TEST) && fs.existsSync(target)) visit(target)
    }
  }
  visit(entry)
  return reached
}

describe("the e2e tier", () => {
  const files = fs.readdirSync(path.join(TEST, "e2e"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".test.ts"))

  it("has test files to check", () => {
    expect(files.length).toBeGreaterThan(0)
  })

  it.each(files)("%s loads no module of src/, directly or through test/support", (file) => {
    expect(srcReachedFrom(path.join(TEST, "e2e", file))).toEqual([])
  })
})
