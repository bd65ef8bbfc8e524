import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { docEndings } from "../../src/cli/settingsOptions.js"
import { tools } from "../../src/mcp/tools/index.js"
import { settingsMarkdownTable } from "../../src/settings/readme.js"
import { repoRoot } from "../support/spawnCli.js"

// The documentation a reader follows: the README, docs/ and the benchmark's README. Every relative link in
// them must lead to a file that exists and, with a `#fragment`, to a heading of that file (GitHub's anchors).

const README_MAX_LINES = 250
const CONFIGURATION = path.join(repoRoot, "docs", "configuration.md")
const START = "<!-- settings table: generated from src/settings/table.ts -->"
const END = "<!-- end of settings table -->"

const markdownFiles = (): ReadonlyArray<string> => [
  path.join(repoRoot, "README.md"),
  path.join(repoRoot, "bench", "README.md"),
  ...fs.readdirSync(path.join(repoRoot, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(repoRoot, "docs", f))
]

/** The lines outside fenced code blocks, with inline code spans blanked (neither holds headings or links). */
const proseLines = (text: string): ReadonlyArray<{ readonly line: number; readonly text: string }> => {
  const out: Array<{ line: number; text: string }> = []
  let fence: string | undefined
  text.split("\n").forEach((raw, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1]
    if (fence !== undefined) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined
    } else if (opener !== undefined) {
      fence = opener
    } else {
      out.push({ line: i + 1, text: raw.replace(/(`+)[^`]*?\1/g, "") })
    }
  })
  return out
}

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` removed, spaces to `-`; repeats get -1, -2, … */
const headingAnchors = (text: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  let fence: string | undefined
  for (const raw of text.split("\n")) {
    const opener = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1]
    if (fence !== undefined) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = undefined
      continue
    }
    if (opener !== undefined) {
      fence = opener
      continue
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)?.[1]
    if (heading === undefined) continue
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** Every relative link of one Markdown file that leads nowhere, as `file:line: target (why)`. */
const brokenLinks = (file: string): ReadonlyArray<string> => {
  const text = fs.readFileSync(file, "utf8")
  const targets = proseLines(text).flatMap(({ line, text }) =>
    [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)]
      .map((m) => ({ line, target: m[1] ?? m[2] ?? "" }))
  )
  return targets.flatMap(({ line, target }) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [] // http:, https:, mailto:
    const [filePart, fragment] = target.split("#", 2) as [string, string | undefined]
    const resolved = filePart === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(filePart))
    const where = `${path.relative(repoRoot, file)}:${line}: ${target}`
    if (!fs.existsSync(resolved)) return [`${where} (no such file)`]
    if (fragment === undefined || !resolved.endsWith(".md")) return []
    return headingAnchors(fs.readFileSync(resolved, "utf8")).has(fragment.toLowerCase()) ? [] : [`${where} (no such heading)`]
  })
}

describe("the documentation", () => {
  it("reads GitHub's anchors: punctuation dropped, spaces to dashes, repeats numbered, code blocks skipped", () => {
    const anchors = headingAnchors(
      "# The `ask` command\n## Over HTTP: many clients (`serve --http`)\n## Notes\n## Notes\n```\n## Not a heading\n```\n## Notes"
    )
    expect([...anchors]).toEqual(["the-ask-command", "over-http-many-clients-serve---http", "notes", "notes-1", "notes-2"])
  })

  it("links only to files and headings that exist", () => {
    expect(markdownFiles().flatMap(brokenLinks)).toEqual([])
  })

  it("links every page of docs/ from the README", () => {
    const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8")
    const pages = markdownFiles().map((file) => path.relative(repoRoot, file)).filter((file) => file.startsWith("docs"))
    expect(pages.filter((page) => !readme.includes(`](${page.split(path.sep).join("/")})`))).toEqual([])
  })

  it(`keeps the README within ${README_MAX_LINES} lines`, () => {
    const lines = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8").trimEnd().split("\n").length
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES)
  })

  it("allows every tool of the server in each headless Claude Code line (one left out is refused when called)", () => {
    const expected = tools.map((tool) => `mcp__parallel-llm__${tool.name}`).sort()
    const lines = ["README.md", "docs/mcp.md"].flatMap((file) =>
      fs.readFileSync(path.join(repoRoot, file), "utf8").split("\n")
        .filter((line) => line.includes("--allowedTools "))
        .map((line) => ({ file, allowed: (line.split("--allowedTools ")[1] ?? "").trim().split(",").sort() }))
    )
    expect(lines.map((l) => l.file)).toEqual(["README.md", "docs/mcp.md"])
    for (const line of lines) expect(line.allowed, line.file).toEqual(expected)
  })

  // `UPDATE_DOCS=1 npx vitest run test/docs.test.ts` writes the generated table into docs/configuration.md.
  it("has in docs/configuration.md the settings table the declarations generate", () => {
    const text = fs.readFileSync(CONFIGURATION, "utf8")
    const start = text.indexOf(START)
    const end = text.indexOf(END)
    expect(start, `docs/configuration.md lacks the marker ${START}`).toBeGreaterThanOrEqual(0)
    expect(end).toBeGreaterThan(start)
    const expected = `${START}\n${settingsMarkdownTable(docEndings)}\n${END}`
    if (process.env.UPDATE_DOCS === "1") {
      fs.writeFileSync(CONFIGURATION, text.slice(0, start) + expected + text.slice(end + END.length))
      return
    }
    expect(text.slice(start, end + END.length)).toBe(expected)
  })
})
