// The module declarations of `src/` (what each file imports, what it exports), read from the text: the project's
// TypeScript 7 has no compiler API to parse with, and dprint keeps every import and export in one plain shape.
import * as fs from "node:fs"
import * as path from "node:path"

export const SRC = path.resolve(import.meta.dirname, "../../src")

/** Every TypeScript file under `src/`, as a path relative to it with `/` separators (`services/runStore.ts`). */
export const sourceFiles = (): ReadonlyArray<string> =>
  fs.readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => file.split(path.sep).join("/"))
    .sort()

export const readSource = (file: string): string => fs.readFileSync(path.join(SRC, file), "utf8")

/** What may start a comment or a string. */
const SPECIAL = /[/"'`]/g

/**
 * The text without comments and without the contents of strings and template literals (their quotes stay, empty),
 * except module specifiers, which are kept: an example in a comment or a message is not a declaration.
 */
const codeOnly = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    // The code up to the next character that may start a comment or a string is copied as it is, in one piece.
    SPECIAL.lastIndex = i
    const at = SPECIAL.exec(text)?.index ?? text.length
    out += text.slice(i, at)
    i = at
    if (i >= text.length) break
    const c = text[i]
    const next = text[i + 1]
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2)
      i = end === -1 ? text.length : end + 2
    } else if (c === "/") {
      out += c
      i++
    } else {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1
      const body = text.slice(i + 1, j)
      // A specifier follows `from`, `import` or `import(`: keep it; blank every other string. Only the end of the text
      // so far is looked at: the pattern tried at every position of the whole of it made each file quadratic.
      const keep = c !== "`" && /(?:\bfrom|\bimport\s*\(?)\s*$/.test(out.slice(-64))
      out += `"${keep ? body : ""}"`
      i = j + 1
    }
  }
  return out
}

export interface ImportOf {
  readonly specifier: string
  /** `import type …`, `export type … from`, or `import(…)` inside a type: erased when compiled. */
  readonly typeOnly: boolean
}

const CLAUSE = String.raw`(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*(?:\s*as\s+[\w$]+)?)?`

/** Every module this file's text imports or re-exports from, static, dynamic or in a type. */
export const importsOf = (text: string): ReadonlyArray<ImportOf> => {
  const code = codeOnly(text)
  const found: Array<ImportOf> = []
  const staticImport = new RegExp(String.raw`(?:^|[\n;])\s*(import|export)\s+(type\s+)?(${CLAUSE})\s*(?:from\s*)?"([^"]+)"`, "g")
  for (const match of code.matchAll(staticImport)) {
    const [, keyword, typeKeyword, clause = "", specifier = ""] = match
    // `export const x = "…"` is no re-export: an export needs `{…}` or `*` before its `from`.
    if (keyword === "export" && !/^\s*(?:\{|\*)/.test(clause)) continue
    const names = /\{([^}]*)\}/.exec(clause)?.[1]?.split(",").map((name) => name.trim()).filter((name) => name.length > 0)
    const allTypes = names !== undefined && names.length > 0 && !/^[\w$]/.test(clause.trim()) &&
      names.every((name) => name.startsWith("type "))
    found.push({ specifier, typeOnly: typeKeyword !== undefined || allTypes })
  }
  for (const match of code.matchAll(/(typeof\s+)?\bimport\s*\(\s*"([^"]+)"\s*\)/g)) {
    const [, inType, specifier = ""] = match
    found.push({ specifier, typeOnly: inType !== undefined })
  }
  return found
}

/** The names this file's text exports (`export default` as `default`), re-exports included. */
export const exportedNamesOf = (text: string): ReadonlyArray<string> => {
  const code = codeOnly(text)
  const names: Array<string> = []
  const declaration =
    /(?:^|\n)\s*export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|interface|type|enum|namespace)\s+([\w$]+)/g
  for (const match of code.matchAll(declaration)) if (match[1] !== undefined) names.push(match[1])
  for (const match of code.matchAll(/(?:^|\n)\s*export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of (match[1] ?? "").split(",")) {
      const words = item.trim().replace(/^type\s+/, "").split(/\s+as\s+/)
      const name = words[words.length - 1]?.trim()
      if (name !== undefined && name.length > 0) names.push(name)
    }
  }
  for (const match of code.matchAll(/(?:^|\n)\s*export\s+\*\s*as\s+([\w$]+)/g)) if (match[1] !== undefined) names.push(match[1])
  if (/(?:^|\n)\s*export\s+default\s+(?!(?:abstract\s+)?(?:async\s+)?(?:function|class)\s+[\w$])/.test(code)) names.push("default")
  return names
}

/** The `src/` file a relative specifier names (`./x.js` → `dir/x.ts`, `./dir/index.js` too); undefined when outside `src/`. */
export const resolveImport = (from: string, specifier: string): string | undefined => {
  if (!specifier.startsWith(".")) return undefined
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier))
  const ts = target.replace(/\.js$/, ".ts")
  for (const candidate of [ts, `${target}.ts`, `${target}/index.ts`]) {
    if (fs.existsSync(path.join(SRC, candidate))) return candidate
  }
  return undefined
}
