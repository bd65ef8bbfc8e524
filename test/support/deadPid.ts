import { spawnSync } from "node:child_process"

/**
 * The pid of a process that has ended (the OS may hand it out again, but not within a test): of `node --version`,
 * which prints before Node starts up, not a whole start-up's tens of ms of CPU.
 */
export const deadPid = (): number => {
  const { pid } = spawnSync(process.execPath, ["--version"])
  if (pid === undefined) throw new Error("node --version did not start")
  return pid
}
