/** How a command ended, as a value: `main.ts` alone turns it into the process's exit code. */
export interface Outcome {
  readonly exitCode: number
}

export const succeeded: Outcome = { exitCode: 0 }
/** The command ran but did not get what it was for (no answer, a prompt failed, a model not found). */
export const failed: Outcome = { exitCode: 1 }

export const outcomeIf = (ok: boolean): Outcome => (ok ? succeeded : failed)
