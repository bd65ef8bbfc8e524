import { Effect } from "effect"
import { stripControl } from "../domain/text.js"

/** The answer or JSON to stdout, without control characters (a provider's text must not drive the terminal). */
export const writeStdout = (text: string) =>
  Effect.sync(() => {
    const clean = stripControl(text)
    process.stdout.write(clean.endsWith("\n") ? clean : `${clean}\n`)
  })
