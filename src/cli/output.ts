import { Effect } from "effect"
import { stripControl } from "../domain/text.js"
import { ProcessIo } from "../services/processIo.js"

/** The answer or JSON to stdout, without control characters (a provider's text must not drive the terminal). */
export const writeStdout = (text: string) =>
  Effect.map(ProcessIo, (io) => {
    const clean = stripControl(text)
    io.stdout.write(clean.endsWith("\n") ? clean : `${clean}\n`)
  })

/** A line to stderr (progress, a summary, a warning), beside the log lines. */
export const writeStderr = (line: string) => Effect.map(ProcessIo, (io) => void io.stderr.write(line))
