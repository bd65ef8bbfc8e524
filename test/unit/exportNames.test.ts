import { describe, expect, it } from "vitest"
import { exportedNamesOf, readSource, sourceFiles } from "../support/sourceModules.js"

// One name, one thing: no two modules of src/ export the same name (a re-export counts: it is a second door to
// the same thing, and an import under an alias is how two same-named things meet).

const exportersByName = (files: ReadonlyArray<string>): Map<string, Array<string>> => {
  const byName = new Map<string, Array<string>>()
  for (const file of files) {
    // A schema and its type (`export const X` and `export type X`) are one name of one file.
    for (const name of new Set(exportedNamesOf(readSource(file)))) byName.set(name, [...(byName.get(name) ?? []), file])
  }
  return byName
}

describe("exported names", () => {
  it("reads every form of export", () => {
    const text = [
      "export const a = 1",
      "export async function b() {}",
      "export function* c() {}",
      "export class D {}",
      "export interface E {}",
      "export type F = string",
      "export enum G {}",
      "export { h, i as j }",
      "export { type K } from \"./k.js\"",
      "export * as l from \"./l.js\"",
      "export default 1",
      "// export const notThis = 1",
      "const s = \"export const norThis = 1\""
    ].join("\n")
    expect([...exportedNamesOf(text)].sort()).toEqual(["D", "E", "F", "G", "K", "a", "b", "c", "default", "h", "j", "l"].sort())
  })

  it("no two modules of src/ export the same name", () => {
    const files = sourceFiles()
    const byName = exportersByName(files)
    // The walk saw the tree: the services and programs every entry point uses are among the names.
    expect(byName.get("Settings")).toEqual(["services/settings.ts"])
    expect(byName.get("runPipeline")).toEqual(["programs/runPipeline.ts"])
    const duplicates = [...byName].filter(([, exporters]) => exporters.length > 1).map(([name, exporters]) =>
      `${name}: ${exporters.join(", ")}`
    )
    expect(duplicates).toEqual([])
  })
})
