import { Layer } from "effect"
import { StoreDisk, type StoreDiskShape } from "../../src/services/storeDisk.js"

/** What Node reports when a write runs out of space. */
export const noSpaceError = (file: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`ENOSPC: no space left on device, write`), { errno: -28, code: "ENOSPC", syscall: "write", path: file })

/** The run store's disk, Node's own with some of its operations changed: `change` is given the real ones. */
export const storeDiskWith = (change: (real: StoreDiskShape) => Partial<StoreDiskShape>): Layer.Layer<StoreDisk> => {
  const real = StoreDisk.defaultValue()
  return Layer.succeed(StoreDisk, { ...real, ...change(real) })
}
