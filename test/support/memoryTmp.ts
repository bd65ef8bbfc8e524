import { existsSync, readFileSync, statfsSync } from "node:fs"

/**
 * A memory filesystem for scratch files, where Linux has one fit for it: on this project's ext4 VMs, creating a small
 * file costs 0.15-2 ms of system time (more, the more files were created and removed before; tmpfs: 0.01-0.03 ms).
 * Only a tmpfs that may run programs (the tests run fake CLIs from their temp directories; Docker's /dev/shm is noexec)
 * and has room to spare (Docker's is 64 MB; the package tests install the package). Used by vitest.config.ts (the
 * tests' TMPDIR) and the bench (its CPU targets' run directories).
 */
const MEMORY_TMP = "/dev/shm"

const mountOptions = (): ReadonlyArray<string> | undefined =>
  readFileSync("/proc/self/mounts", "utf8").split("\n").map((line) => line.split(" ")).find((fields) =>
    fields[1] === MEMORY_TMP && fields[2] === "tmpfs"
  )?.[3]?.split(",")

/** `/dev/shm` when it is such a tmpfs with at least 1 GB free, else undefined. */
export const memoryTmp = (): string | undefined => {
  if (!existsSync("/proc/self/mounts")) return undefined
  const options = mountOptions()
  if (options === undefined || options.includes("noexec") || options.includes("ro")) return undefined
  const { bavail, bsize } = statfsSync(MEMORY_TMP)
  return bavail * bsize >= 2 ** 30 ? MEMORY_TMP : undefined
}
