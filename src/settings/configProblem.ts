import type { ConfigError } from "effect"

/** The deepest line of a formatted schema error: the one that says what was wrong, not the schema's type. */
const innermost = (message: string): string => {
  const lines = message.split("\n").map((l) => l.replace(/^[\s└├│─]+/, "").trim()).filter((l) => l !== "")
  return lines[lines.length - 1] ?? message.trim()
}

/** The most useful single line out of a ConfigError tree, and the key it is about. */
export const firstConfigProblem = (error: ConfigError.ConfigError): { key: string; message: string } => {
  switch (error._op) {
    case "And":
    case "Or":
      return firstConfigProblem(error.left)
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return { key: error.path[0] ?? "setting", message: innermost(error.message) }
  }
}
