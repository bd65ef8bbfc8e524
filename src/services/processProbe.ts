import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as os from "node:os"
import type { Liveness } from "../domain/runState.js"

/** This machine's name, as owner records give it. */
export const thisHost = (): string => os.hostname()

/** When this process started, as owner records give it. */
export const thisProcessStartedAt = (): Date => new Date(performance.timeOrigin)

/** Linux reports process start times in clock ticks since boot; `USER_HZ` is 100 on every Linux ABI. */
const TICKS_PER_SECOND = 100

/** What /proc (Linux) says of a pid: whether it is a zombie (dead, not yet reaped) and when it started. */
const procStatOf = (fs: FileSystem.FileSystem, pid: number) =>
  Effect.all([fs.readFileString(`/proc/${pid}/stat`), fs.readFileString("/proc/stat")]).pipe(
    Effect.map(([stat, system]) => {
      // The command name (field 2) may hold spaces and parentheses: fields are counted after its closing one.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const ticks = Number(fields[19])
      const bootSeconds = Number(/^btime (\d+)$/m.exec(system)?.[1])
      return {
        dead: fields[0] === "Z" || fields[0] === "X",
        startedAtMs: Number.isFinite(ticks) && Number.isFinite(bootSeconds)
          ? bootSeconds * 1000 + (ticks * 1000) / TICKS_PER_SECOND
          : undefined
      }
    }),
    Effect.orElseSucceed(() => ({ dead: false, startedAtMs: undefined }))
  )

/** Whether a pid of this host is alive (signal 0 probes without sending anything) and, when known, since when. */
export const probePid = (fs: FileSystem.FileSystem, pid: number): Effect.Effect<Liveness> =>
  Effect.try(() => process.kill(pid, 0)).pipe(
    Effect.as(true),
    // EPERM: the process exists but belongs to another user.
    Effect.catchAll((e) => Effect.succeed(!(e.error instanceof Error && "code" in e.error && e.error.code === "ESRCH"))),
    Effect.flatMap((exists): Effect.Effect<Liveness> =>
      exists
        ? procStatOf(fs, pid).pipe(
          Effect.map(({ dead, startedAtMs }): Liveness => (dead ? { _tag: "NoSuchProcess" } : { _tag: "Alive", startedAtMs }))
        )
        : Effect.succeed({ _tag: "NoSuchProcess" })
    )
  )
