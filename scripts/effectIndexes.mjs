// Our modules import `{ Effect, Schema }` from the packages' index modules ("effect", "@effect/platform",
// "@effect/cli"). An index runs every module it re-exports: all of Effect, and for the platform its HTTP API's
// Swagger and Scalar pages (5.4 MB of source, ~0.4 s of CPU for each process that imports it) and MsgPack. Both
// builds import each name from its own module instead (`import * as Effect from "effect/Effect"`), as the Effect
// packages import one another: the bundle (scripts/bundle.mjs, where esbuild would otherwise wrap a module loaded
// on demand and every index it imports) and dist/'s modules, which the tests import (scripts/build.mjs).
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const INDEXED = ["effect", "@effect/platform", "@effect/cli"]

/** An index's names: `export * as Name from "./Name.js"` (a module) or `export { name } from "./file.js"`. */
const indexOf = (pkg) => {
  const text = fs.readFileSync(path.join(root, "node_modules", pkg, "dist", "esm", "index.js"), "utf8").replace(/\/\*[^]*?\*\//g, "")
  const names = new Map()
  for (const [, name, file] of text.matchAll(/export \* as (\w+) from "\.\/([\w/]+)\.js"/g)) names.set(name, { from: `${pkg}/${file}` })
  for (const [, list, file] of text.matchAll(/export \{([^}]*)\} from "\.\/([\w/]+)\.js"/g)) {
    for (const name of list.split(",").map((n) => n.trim()).filter((n) => n !== "")) {
      names.set(name, { from: `${pkg}/${file}`, named: true })
    }
  }
  return names
}
const indexes = new Map(INDEXED.map((pkg) => [pkg, indexOf(pkg)]))

/**
 * `text` (TypeScript or JavaScript) with each `import { … } from` one of the indexes split into one import a name
 * (type-only names dropped). The lines stay where they were, so a source map made before still fits.
 */
export const fromIndexes = (text, file) =>
  text.replace(
    /import\s*\{([^}]*)\}\s*from\s*"(effect|@effect\/platform|@effect\/cli)"/g,
    (whole, clause, pkg) =>
      clause.split(",").map((part) => part.trim()).filter((part) => part !== "" && !part.startsWith("type ")).map((part) => {
        const [name, local = name] = part.split(/\s+as\s+/)
        const target = indexes.get(pkg).get(name)
        if (target === undefined) throw new Error(`${file}: ${name} is not exported by ${pkg}'s index`)
        return target.named ? `import { ${name} as ${local} } from "${target.from}"` : `import * as ${local} from "${target.from}"`
      }).join(";") + "\n".repeat(whole.split("\n").length - 1)
  )

/** Every `.js` module under `dir`, rewritten in place where it imports an index (a rewritten one is left as it is). */
export const rewriteModulesUnder = (dir) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue
    const file = path.join(entry.parentPath, entry.name)
    const text = fs.readFileSync(file, "utf8")
    const rewritten = fromIndexes(text, file)
    if (rewritten !== text) fs.writeFileSync(file, rewritten)
  }
}
