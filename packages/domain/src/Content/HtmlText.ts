/** Text placed into HTML (element content or a quoted attribute value) so that it stays text. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
