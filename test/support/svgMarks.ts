// What a test reads back from an SVG chart Vega wrote: its point marks and its texts.

export interface Point {
  readonly label: string
  readonly x: number
  readonly y: number
}

/** The point marks of an SVG written by Vega: each has an aria-label with its data, and a translate. */
export const pointsOf = (svg: string): ReadonlyArray<Point> =>
  [...svg.matchAll(
    /<path aria-label="([^"]*)" role="graphics-symbol" aria-roledescription="point" transform="translate\(([\d.]+),([\d.]+)\)"/g
  )]
    .map((m) => ({ label: m[1]!, x: Number(m[2]), y: Number(m[3]) }))
export const textsOf = (svg: string): ReadonlyArray<string> => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!)
