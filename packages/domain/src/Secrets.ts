/**
 * Secret material: random base62 strings, the token format with its checksum, SHA-256 for what is looked up
 * (tokens, claim tokens) and keyed HMAC for what is guessed (OTPs). Nothing secret is ever stored in clear.
 */
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Base62 of a big-endian byte string, zero-padded to `width` characters. */
const toBase62 = (bytes: Uint8Array, width: number): string => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  let out = ""
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out
    value /= 62n
  }
  return out.padStart(width, "0")
}

/** `bytes` random bytes from the CSPRNG as base62 (32 bytes → 43 characters). */
export const randomBase62 = (bytes: number): string =>
  toBase62(randomBytes(bytes), Math.ceil((bytes * 8) / Math.log2(62)))

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

export const crc32 = (text: string): number => {
  let crc = 0xffffffff
  for (const byte of new TextEncoder().encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

const checksum = (body: string): string => {
  const value = crc32(body)
  return toBase62(new Uint8Array([value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]), 6)
}

export const TOKEN_PREFIX = "dock_mcp_"
/** OAuth access tokens (docs/oauth.md): the same shape and checksum as MCP tokens, told apart by the prefix. */
export const ACCESS_TOKEN_PREFIX = "dock_at_"
/** OAuth refresh tokens: only ever sent to /oauth/token and /oauth/revoke. */
export const REFRESH_TOKEN_PREFIX = "dock_rt_"
const TOKEN_BODY_LENGTH = 43
const TOKEN_PATTERN = /^(dock_mcp_|dock_at_|dock_rt_)([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/

/** A new secret: the prefix + 32 random bytes in base62 + a 6-character CRC32 checksum. */
const newChecksummed = (prefix: string): string => {
  const body = `${prefix}${randomBase62(32)}`
  return `${body}${checksum(body)}`
}

/** A new MCP token: `dock_mcp_` + 32 random bytes in base62 + a 6-character CRC32 checksum. */
export const newToken = (): string => newChecksummed(TOKEN_PREFIX)
export const newAccessToken = (): string => newChecksummed(ACCESS_TOKEN_PREFIX)
export const newRefreshToken = (): string => newChecksummed(REFRESH_TOKEN_PREFIX)

/** Shape and checksum only: a typo or a made-up value is refused before any database work. */
export const isWellFormedSecret = (token: string, prefix: string): boolean => {
  const match = TOKEN_PATTERN.exec(token)
  if (match === null || match[1] !== prefix || match[2]!.length !== TOKEN_BODY_LENGTH) return false
  return checksum(`${match[1]}${match[2]}`) === match[3]
}

/** A bearer for /mcp: an MCP token or an OAuth access token (never a refresh token). */
export const isWellFormedToken = (token: string): boolean =>
  isWellFormedSecret(token, TOKEN_PREFIX) || isWellFormedSecret(token, ACCESS_TOKEN_PREFIX)

export const REGISTRATION_PREFIX = "dock_reg_"

/** A claim token (the spec's registration_id): 128 random bits. */
export const newRegistrationSecret = (): string => `${REGISTRATION_PREFIX}${randomBase62(16)}`

export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/** A six-digit code from the CSPRNG. */
export const newOtp = (): string => randomInt(0, 1_000_000).toString().padStart(6, "0")

/** HMAC(secret, purpose‖registration‖email‖otp): an OTP at rest cannot be brute-forced without the secret. */
export const otpHash = (
  secret: string,
  parts: { purpose: string; registrationId: string; email: string; otp: string }
) =>
  createHmac("sha256", secret)
    .update([parts.purpose, parts.registrationId, parts.email, parts.otp].join("\u0000"))
    .digest("hex")

export const sameHash = (a: string, b: string): boolean => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
