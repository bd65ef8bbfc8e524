import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { loadSettings } from "../../src/settings/load.js"
import { itLive } from "../support/itLive.js"
import { makeTempDirs } from "../support/tempDirs.js"

// A config file's error names the line to look at: where the text stops being JSON, or the key at fault.

const tempDir = makeTempDirs("pllm-config-line-")

const errorFor = (content: string) => {
  const dir = tempDir()
  const file = path.join(dir, "config.json")
  fs.writeFileSync(file, content)
  return loadSettings({ flags: {}, configFlag: file, env: { XDG_CONFIG_HOME: dir, OPENROUTER_API_KEY: "sk-or-v1-line-test-0123456789" } })
    .pipe(
      Effect.flip,
      Effect.map((e) => e.message.replace(file, "FILE")),
      Effect.provide(NodeFileSystem.layer)
    )
}

describe("config file errors name the line", () => {
  itLive.effect("syntax errors, where Node's parser names a position and where it names none", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        [`{\n  "timeout": 30,\n  "models": ["a/one",],\n}\n`, "FILE: not valid JSON at line 3,"], // trailing comma: no position from Node
        [`{\n  "timeout": 30\n  "retries": 2\n}\n`, "FILE: not valid JSON at line 3,"], // missing comma
        [`{\n  "timeout": ,\n  "retries": 2\n}\n`, "FILE: not valid JSON at line 2,"],
        [`{\n  "timeout": 30,\n  "retries": 2\n`, "FILE: not valid JSON at line 3,"], // cut short
        [`{\n  "timeout": 30\n}\n}\n`, "FILE: not valid JSON at line 4,"] // text after the end
      ]
      for (const [content, expected] of cases) {
        expect(yield* errorFor(content), JSON.stringify(content)).toMatch(new RegExp(`^${expected}`))
      }
    }))

  itLive.effect("a wrong value or an unknown key: the line of that key, in a preset too", () =>
    Effect.gen(function*() {
      expect(yield* errorFor(`{\n  "models": ["a/one"],\n  "retries": "many"\n}\n`)).toMatch(/^FILE, line 3: retries:/)
      expect(
        yield* errorFor(
          `{\n  "models": ["a/one"],\n  "presets": {\n    "fast": {\n      "models": ["a/b"],\n      "retriez": 1\n    }\n  }\n}\n`
        )
      )
        .toMatch(/^FILE, line 6: presets\.fast\.retriez/)
    }))
})
