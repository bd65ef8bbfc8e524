import { describe, expect, it } from "vitest"
import { importsOf, readSource, resolveImport, sourceFiles } from "../support/sourceModules.js"

// The imports of src/ point down the layers and never in a circle, type-only imports included (a type-only
// circle still means two modules that cannot be read one without the other):
//   domain < settings < services < programs < mcp, viewer, cli < main.ts, runCli.ts, appLayer.ts
// mcp, viewer and cli are side by side and do not import each other, but where one starts another (SIDEWAYS_ALLOWED).

const LAYERS: Readonly<Record<string, number>> = { domain: 0, settings: 1, services: 2, programs: 3, mcp: 4, viewer: 4, cli: 4 }
const TOP = 5

const layerOf = (file: string): number => LAYERS[file.split("/")[0] ?? ""] ?? TOP
const folderOf = (file: string): string => (file.includes("/") ? file.split("/")[0] ?? "" : file)

/**
 * `serve` is the CLI's way to start the MCP server, `runs open` its way to start the viewer: each command imports
 * that entry point. The viewer (its page, and the server of `runs open`) shows a run as the MCP tools give it, and
 * serves the run site mcp/site/ holds (routes, access, the page's data), which `serve --http` mounts beside /mcp and
 * the MCP App's tool reads: so viewer imports mcp, and mcp never imports viewer.
 */
const SIDEWAYS_ALLOWED = (from: string, to: string): boolean =>
  (from === "cli/serveCommand.ts" && folderOf(to) === "mcp") ||
  (from === "cli/runsOpenCommand.ts" && folderOf(to) === "viewer") ||
  (folderOf(from) === "viewer" && folderOf(to) === "mcp")

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

const importGraph = (): { readonly graph: Graph; readonly unresolved: ReadonlyArray<string> } => {
  const graph = new Map<string, Array<string>>()
  const unresolved: Array<string> = []
  for (const file of sourceFiles()) {
    const targets: Array<string> = []
    for (const { specifier } of importsOf(readSource(file))) {
      if (!specifier.startsWith(".")) continue
      const target = resolveImport(file, specifier)
      if (target === undefined) unresolved.push(`${file}: ${specifier}`)
      else targets.push(target)
    }
    graph.set(file, targets)
  }
  return { graph, unresolved }
}

/** The graph's strongly connected components of more than one file (or a file importing itself): its circles. */
const circlesOf = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const circles: Array<Array<string>> = []
  const visit = (file: string): void => {
    index.set(file, index.size)
    low.set(file, index.get(file) ?? 0)
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(target) ?? 0))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: Array<string> = []
    let member: string | undefined
    do {
      member = stack.pop()
      if (member === undefined) break
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return circles
}

describe("the import graph of src/", () => {
  const { graph, unresolved } = importGraph()

  it("reads every import, static, dynamic and type-only", () => {
    expect(unresolved).toEqual([])
    const sample = [
      "import { a } from \"./a.js\"",
      "import type { B } from \"./b.js\"",
      "import {",
      "  type C,",
      "  d",
      "} from \"./c.js\"",
      "export { e } from \"./e.js\"",
      "export * from \"./f.js\"",
      "const g = await import(\"./g.js\")",
      "type H = typeof import(\"./h.js\")",
      "// import { no } from \"./comment.js\"",
      "const s = \"import { no } from './string.js'\""
    ].join("\n")
    expect(importsOf(sample)).toEqual([
      { specifier: "./a.js", typeOnly: false },
      { specifier: "./b.js", typeOnly: true },
      { specifier: "./c.js", typeOnly: false },
      { specifier: "./e.js", typeOnly: false },
      { specifier: "./f.js", typeOnly: false },
      { specifier: "./g.js", typeOnly: false },
      { specifier: "./h.js", typeOnly: true }
    ])
    // The walk saw the tree: the launcher runs the command line, which builds the service graph.
    expect(graph.get("main.ts")).toContain("runCli.ts")
    expect(graph.get("runCli.ts")).toContain("appLayer.ts")
  })

  it("has no import that goes up the layers, or between mcp and cli", () => {
    const wrong = [...graph].flatMap(([from, targets]) =>
      targets
        .filter((to) =>
          layerOf(to) > layerOf(from) ||
          (layerOf(to) === layerOf(from) && layerOf(from) < TOP && folderOf(to) !== folderOf(from) && !SIDEWAYS_ALLOWED(from, to))
        )
        .map((to) => `${from} -> ${to}`)
    )
    expect(wrong).toEqual([])
  })

  it("has no circle between folders either: mcp, viewer and cli import one another one way only", () => {
    const edges = new Set([...graph].flatMap(([from, targets]) => targets.map((to) => `${folderOf(from)} -> ${folderOf(to)}`)))
    const both = [...edges].filter((edge) => {
      const [from, to] = edge.split(" -> ")
      return from !== to && edges.has(`${to} -> ${from}`)
    })
    expect(edges).toContain("viewer -> mcp")
    expect(both).toEqual([])
  })

  it("has no import circle", () => {
    const circles = circlesOf(graph)
    expect(circles).toEqual([])
  })
})
