import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { readFileSafely, type SafeReadOptions } from "../../src/domain/safeFile.js"
import { makeTempDirs } from "../support/tempDirs.js"

// Issue 23, findings 1, 2 and 4: the one reader of files from outside opens once, checks what it opened, and
// reads at most its cap from that descriptor.

const tempDir = makeTempDirs("pllm-safe-")

/** The refusal's reason and message, or what was read. */
const outcomeOf = (file: string, options: SafeReadOptions) =>
  Effect.map(
    Effect.either(readFileSafely(file, options)),
    (e) => (e._tag === "Left" ? `${e.left.reason}: ${e.left.message}` : `read ${Buffer.from(e.right).toString()}`)
  )

describe("readFileSafely", () => {
  it.live("refuses a FIFO at once instead of hanging on its open", () =>
    Effect.gen(function*() {
      const fifo = path.join(tempDir(), "run.json")
      execFileSync("mkfifo", [fifo])
      expect(yield* outcomeOf(fifo, { maxBytes: 100, followLinks: true })).toBe(`not a regular file: ${fifo}: not a regular file`)
    }))

  it.live("refuses a symlink to /dev/zero (not followed; followed, it is a device) without reading it", () =>
    Effect.gen(function*() {
      const link = path.join(tempDir(), ".gitignore")
      fs.symlinkSync("/dev/zero", link)
      const before = process.memoryUsage().rss
      expect(yield* outcomeOf(link, { maxBytes: 1_000_000 })).toBe(`not a regular file: ${link}: a symbolic link, not a regular file`)
      expect(yield* outcomeOf(link, { maxBytes: 1_000_000, followLinks: true })).toBe(`not a regular file: ${link}: not a regular file`)
      expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024)
    }))

  it.live("reads /proc/self/pagemap (size 0 by stat) only up to its cap", () =>
    Effect.gen(function*() {
      expect(yield* outcomeOf("/proc/self/pagemap", { maxBytes: 4096 })).toBe(
        "too large: /proc/self/pagemap: larger than 4096 bytes"
      )
      const head = yield* readFileSafely("/proc/self/pagemap", { maxBytes: 4096, head: true })
      expect(head.length).toBe(4096)
    }))

  it.live("refuses a directory, a missing file, and a file whose real path is outside the allowed ones", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const root = path.join(dir, "root")
      fs.mkdirSync(root)
      fs.writeFileSync(path.join(dir, "secret.txt"), "secret")
      fs.writeFileSync(path.join(root, "ok.txt"), "fine")
      fs.symlinkSync(path.join(dir, "secret.txt"), path.join(root, "link.txt"))
      fs.symlinkSync(dir, path.join(root, "up"))
      const inside = [fs.realpathSync(root)]
      expect(yield* outcomeOf(root, { maxBytes: 10 })).toBe(`not a regular file: ${root}: a directory, not a regular file`)
      expect(yield* outcomeOf(path.join(root, "nope"), { maxBytes: 10 })).toBe(`missing: ${path.join(root, "nope")}: no such file`)
      expect(yield* outcomeOf(path.join(root, "ok.txt"), { maxBytes: 10, inside })).toBe("read fine")
      expect(yield* outcomeOf(path.join(root, "link.txt"), { maxBytes: 10, inside, followLinks: true })).toMatch(
        /^outside: .*link\.txt: \(.*secret\.txt\) lies outside the allowed directories$/
      )
      // A directory symlink on the way is not the last component: O_NOFOLLOW does not see it, the real path does.
      expect(yield* outcomeOf(path.join(root, "up", "secret.txt"), { maxBytes: 10, inside })).toMatch(/^outside: /)
      expect(yield* outcomeOf(path.join(root, "ok.txt"), { maxBytes: 3 })).toBe(
        `too large: ${path.join(root, "ok.txt")}: larger than 3 bytes`
      )
    }))
})
