// What `--help` shows of one option or argument: the command declarations (flags.ts) and the settings' flags
// (settingsOptions.ts) both make these, and help.ts renders them.

/** One entry of `--help`: an option or an argument. */
export interface FlagHelp {
  /** `-f, --file`, or an argument's `<run-id>` / `[prompt]`. */
  readonly names: string
  /** `<path>`, `<path>...`; empty for a switch or an argument. */
  readonly value: string
  readonly doc: string
  /** `repeatable`, `default: 20`, `env: …`. */
  readonly notes: ReadonlyArray<string>
  /** Whether the option reads the next word as its value (the check for unknown options skips it). */
  readonly takesValue: boolean
}
