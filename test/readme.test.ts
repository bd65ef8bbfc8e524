import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { settingsMarkdownTable } from "../src/settings/readme.js"
import { repoRoot } from "./support/spawnCli.js"

const README = path.join(repoRoot, "README.md")
const START = "<!-- settings table: generated from src/settings/table.ts -->"
const END = "<!-- end of settings table -->"

describe("README", () => {
  // `UPDATE_README=1 npx vitest run test/readme.test.ts` writes the generated table into the README.
  it("its settings table is the one the declarations generate", () => {
    const text = fs.readFileSync(README, "utf8")
    const start = text.indexOf(START)
    const end = text.indexOf(END)
    expect(start, `the README lacks the marker ${START}`).toBeGreaterThanOrEqual(0)
    expect(end).toBeGreaterThan(start)
    const expected = `${START}\n${settingsMarkdownTable()}\n${END}`
    if (process.env.UPDATE_README === "1") {
      fs.writeFileSync(README, text.slice(0, start) + expected + text.slice(end + END.length))
      return
    }
    expect(text.slice(start, end + END.length)).toBe(expected)
  })
})
