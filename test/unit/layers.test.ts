import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

// The house's floors: a file may import its own floor and those below, never one above.
// Entry points (cli, mcp) → programs → services (settings sits with them) → domain.
const SRC = path.join(import.meta.dirname, "..", "..", "src")

const floorOf = (file: string): number | undefined => {
  const top = path.relative(SRC, file).split(path.sep)[0]
  return top === "domain" ? 1 : top === "settings" || top === "services" ? 2 : top === "programs" ? 3 : undefined
}

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sources(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** Every relative import of a file, resolved to the source file it names. */
const importsOf = (file: string): Array<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/gm)].map((m) =>
    path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, ".ts"))
  )

const relative = (file: string) => path.relative(SRC, file)
const files = sources(SRC)
const edges = files.flatMap((from) => importsOf(from).map((to) => ({ from, to })))

describe("the source tree's layers", () => {
  it("reads every import (the pattern still finds them)", () => {
    expect(edges.length).toBeGreaterThan(files.length)
    expect(edges.every(({ to }) => fs.existsSync(to))).toBe(true)
  })

  it("imports point down only: entry points → programs → services and settings → domain", () => {
    const upward = edges.filter(({ from, to }) => {
      const [a, b] = [floorOf(from), floorOf(to)]
      // Entry points (cli, mcp, main, AppLayer) may import anything below them.
      if (a === undefined) return false
      return b === undefined || b > a
    })
    expect(upward.map(({ from, to }) => `${relative(from)} -> ${relative(to)}`)).toEqual([])
  })

  it("the MCP server imports nothing from the CLI, and no command imports another command", () => {
    const wrong = edges.filter(({ from, to }) =>
      (relative(from).startsWith(`mcp${path.sep}`) && relative(to).startsWith(`cli${path.sep}`)) ||
      (/Command\.ts$/.test(from) && /Command\.ts$/.test(to))
    )
    expect(wrong.map(({ from, to }) => `${relative(from)} -> ${relative(to)}`)).toEqual([])
  })
})
