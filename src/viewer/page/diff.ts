// Where a candidate differs from the final answer: its words that the final answer does not use are marked.
// A bag of words, not an alignment: cheap on long answers, and enough to see what an answer adds.

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’_-]*/gu

const normal = (word: string): string => word.toLowerCase().replace(/’/g, "'")

/** The words of a text, as a set to look up. */
export const wordsOf = (text: string): ReadonlySet<string> => new Set(Array.from(text.matchAll(WORD), (m) => normal(m[0])))

export interface Piece {
  readonly text: string
  /** Not in the final answer. */
  readonly added: boolean
}

/** The text cut into runs of words the final answer has (or not); the separators go with the run before them. */
export const piecesOf = (text: string, final: ReadonlySet<string>): { pieces: Array<Piece>; share: number } => {
  const pieces: Array<Piece> = []
  let total = 0
  let added = 0
  let last = 0
  const push = (piece: Piece) => {
    const previous = pieces[pieces.length - 1]
    if (previous !== undefined && previous.added === piece.added) {
      pieces[pieces.length - 1] = { ...previous, text: previous.text + piece.text }
    } else if (piece.text !== "") pieces.push(piece)
  }
  for (const match of text.matchAll(WORD)) {
    const index = match.index ?? 0
    push({ text: text.slice(last, index), added: pieces[pieces.length - 1]?.added ?? false })
    const isNew = !final.has(normal(match[0]))
    total += 1
    if (isNew) added += 1
    push({ text: match[0], added: isNew })
    last = index + match[0].length
  }
  push({ text: text.slice(last), added: false })
  return { pieces, share: total === 0 ? 0 : added / total }
}
