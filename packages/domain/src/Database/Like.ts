/** Escapes `%`, `_` and `\` so text matches itself literally in a LIKE / ILIKE pattern. */
export const escapeLike = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`)
