/** Small text helpers every kind of content uses. */
/** Text placed into HTML (element content or a quoted attribute value) so that it stays text. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** The size of text as stored (UTF-8 bytes): what content caps count. */
export const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength
