/** A share link's secret: how it is made, recognised and put in a URL (kept apart from the wire schemas). */
import { randomBase62 } from "../Secrets.ts"

export const SHARE_PREFIX = "dock_share_"
const SHARE_PATTERN = /^dock_share_[0-9A-Za-z]{43}$/

/** A new link secret: `dock_share_` + 32 random bytes (256 bits) in base62; the prefix lets log redaction spot it. */
export const newShareSecret = (): string => `${SHARE_PREFIX}${randomBase62(32)}`

/** Shape only: anything else is refused before any database work (and answered as the same 404). */
export const isWellFormedShareSecret = (secret: string): boolean => SHARE_PATTERN.test(secret)

/** Where a link is opened: `<base>/s/<secret>`. */
export const shareUrl = (baseUrl: string, secret: string) => `${baseUrl.replace(/\/+$/, "")}/s/${secret}`
