import * as os from "node:os"
import * as path from "node:path"
import { isDynamicPattern } from "tinyglobby"

/** A glob pattern's segments (either slash), and the index of its first wildcard segment. */
const segmentsOf = (spec: string) => {
  const segments = spec.split(/[\\/]/)
  const firstDynamic = segments.findIndex((segment) => isDynamicPattern(segment))
  return { segments, firstDynamic: firstDynamic === -1 ? segments.length : firstDynamic }
}

/** The directory a glob starts from: its segments before the first wildcard, resolved against `base`. */
export const globStart = (spec: string, base: string): string => {
  const { firstDynamic, segments } = segmentsOf(spec)
  const fixed = segments.slice(0, firstDynamic).join(path.sep)
  return path.resolve(base, fixed === "" && path.isAbsolute(spec) ? path.sep : fixed)
}

/**
 * Why a glob is not crawled, or undefined: over MCP a `..` anywhere (only where the glob starts is checked
 * against the roots, and `..` would walk it out of them); anywhere, a `..` after a wildcard (the same, for a
 * crawl that could reach the whole disk); a glob that starts at `/` or the home directory (it crawls all of it).
 */
export const globRefusal = (spec: string, base: string, overMcp: boolean): string | undefined => {
  const { firstDynamic, segments } = segmentsOf(spec)
  const ups = segments.flatMap((segment, i) => (segment === ".." ? [i] : []))
  if (overMcp && ups.length > 0) {
    return `${spec}: a glob may not hold "..": name the directory it starts from inside your roots`
  }
  if (ups.some((i) => i > firstDynamic)) {
    return `${spec}: ".." after a wildcard may leave the directory the glob starts from; write the path without it`
  }
  const start = globStart(spec, base)
  const home = os.homedir()
  if (start === path.parse(start).root || start === home || segments[0] === "~") {
    return `${spec}: a glob from ${start === home || segments[0] === "~" ? "the home directory" : "the root directory"} ` +
      `would crawl all of it; start it from a directory below (e.g. ${path.join(home, "project", "**", "*.ts")})`
  }
  return undefined
}
