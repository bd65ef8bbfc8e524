import * as vega from "vega"
import * as vegaLite from "vega-lite"

// Kept apart from plot.ts so that the bundle can ship Vega as a file of its own, loaded only by `eval --plot`
// (scripts/bundle.mjs): about 1.2 MB that no other command parses.

/** A Vega-Lite specification drawn as a standalone SVG document (Vega escapes the texts it writes). */
export const svgOf = (spec: object): Promise<string> => {
  const compiled = vegaLite.compile(spec as vegaLite.TopLevelSpec).spec
  return new vega.View(vega.parse(compiled), { renderer: "none" }).toSVG()
}
