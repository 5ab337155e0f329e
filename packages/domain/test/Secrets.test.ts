// Secret material without a database: the token format and its checksum, claim tokens, OTPs and their keyed hash.
import { describe, expect, it } from "@effect/vitest"
import { createHash, createHmac } from "node:crypto"
import {
  crc32,
  isWellFormedToken,
  newOtp,
  newRegistrationSecret,
  newToken,
  otpHash,
  REGISTRATION_PREFIX,
  sameHash,
  sha256,
  TOKEN_PREFIX
} from "../src/index.ts"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const TOKEN = /^dock_mcp_[0-9A-Za-z]{43}[0-9A-Za-z]{6}$/

describe("tokens", () => {
  it("are dock_mcp_ + 43 base62 characters + a 6-character checksum", () => {
    expect(TOKEN_PREFIX).toBe("dock_mcp_")
    for (let n = 0; n < 200; n++) {
      const token = newToken()
      expect(token).toMatch(TOKEN)
      expect(token).toHaveLength(9 + 43 + 6)
      expect(isWellFormedToken(token)).toBe(true)
    }
  })

  it("end in the CRC32 of everything before the checksum, in base62", () => {
    // The CRC-32 check value: secret scanners verify the checksum with the standard polynomial.
    expect(crc32("123456789")).toBe(0xcbf43926)
    const token = newToken()
    let value = crc32(token.slice(0, -6))
    let encoded = ""
    for (let n = 0; n < 6; n++) {
      encoded = BASE62[value % 62] + encoded
      value = Math.floor(value / 62)
    }
    expect(token.slice(-6)).toBe(encoded)
  })

  it("are refused after any single-character change", () => {
    for (let sample = 0; sample < 3; sample++) {
      const token = newToken()
      let changes = 0
      for (let position = 0; position < token.length; position++) {
        for (const replacement of `${BASE62}_-`) {
          if (replacement === token[position]) continue
          const changed = token.slice(0, position) + replacement + token.slice(position + 1)
          changes++
          if (isWellFormedToken(changed)) {
            throw new Error(`accepted ${changed} (position ${position} of ${token})`)
          }
        }
      }
      expect(changes).toBe(token.length * 63)
    }
  })

  it("are refused with a wrong prefix", () => {
    const token = newToken()
    const rest = token.slice(TOKEN_PREFIX.length)
    for (
      const prefix of [
        "",
        "dock_mcp",
        "dock-mcp_",
        "Dock_mcp_",
        "DOCK_MCP_",
        "service_mcp_",
        "dock_reg_",
        "dock_pat_",
        " dock_mcp_",
        "xdock_mcp_"
      ]
    ) {
      expect(isWellFormedToken(`${prefix}${rest}`)).toBe(false)
    }
    expect(isWellFormedToken(`Bearer ${token}`)).toBe(false)
  })

  it("are refused with a wrong length", () => {
    const token = newToken()
    expect(isWellFormedToken(token.slice(0, -1))).toBe(false)
    expect(isWellFormedToken(token.slice(1))).toBe(false)
    expect(isWellFormedToken(`${token}0`)).toBe(false)
    expect(isWellFormedToken(`${token} `)).toBe(false)
    expect(isWellFormedToken(` ${token}`)).toBe(false)
    expect(isWellFormedToken(`${token}\n`)).toBe(false)
    // One body character dropped and one checksum character added: still 58 characters but not the format.
    expect(isWellFormedToken(`${token.slice(0, 20)}${token.slice(21)}0`)).toBe(false)
    expect(isWellFormedToken("")).toBe(false)
    expect(isWellFormedToken(TOKEN_PREFIX)).toBe(false)
    expect(isWellFormedToken(`${token}${token}`)).toBe(false)
  })

  it("a well-formed value that was never issued is still well-formed (the database decides)", () => {
    // The checksum is computable by anyone; well-formedness only filters typos.
    const body = `${TOKEN_PREFIX}${"A".repeat(43)}`
    let value = crc32(body)
    let encoded = ""
    for (let n = 0; n < 6; n++) {
      encoded = BASE62[value % 62] + encoded
      value = Math.floor(value / 62)
    }
    expect(isWellFormedToken(`${body}${encoded}`)).toBe(true)
  })

  it("1000 new tokens are distinct, in their bodies too", () => {
    const tokens = Array.from({ length: 1000 }, () => newToken())
    expect(new Set(tokens).size).toBe(1000)
    expect(new Set(tokens.map((token) => token.slice(9, 52))).size).toBe(1000)
  })

  it("use the whole base62 alphabet", () => {
    const seen = new Set(Array.from({ length: 200 }, () => newToken().slice(9, 52)).join(""))
    expect(seen.size).toBe(62)
  })
})

describe("registration secrets", () => {
  it("are dock_reg_ + 22 base62 characters: at least 128 random bits", () => {
    expect(REGISTRATION_PREFIX).toBe("dock_reg_")
    for (let n = 0; n < 200; n++) {
      const secret = newRegistrationSecret()
      expect(secret).toMatch(/^dock_reg_[0-9A-Za-z]{22}$/)
    }
    expect(22 * Math.log2(62)).toBeGreaterThanOrEqual(128)
  })

  it("1000 are distinct", () => {
    expect(new Set(Array.from({ length: 1000 }, () => newRegistrationSecret())).size).toBe(1000)
  })
})

describe("OTPs", () => {
  it("are always six digits, leading zeros kept", () => {
    const codes = Array.from({ length: 5000 }, () => newOtp())
    for (const code of codes) expect(code).toMatch(/^\d{6}$/)
    // With 5000 draws, a code below 100000 is all but certain (1 - 0.9^5000).
    expect(codes.some((code) => code.startsWith("0"))).toBe(true)
    expect(new Set(codes).size).toBeGreaterThan(4900)
  })

  const base = {
    purpose: "claim",
    registrationId: "3f1c8a52-0c1e-4d8e-9a55-6f1f3c0d2b11",
    email: "ada@example.com",
    otp: "123456"
  }
  const key = "k".repeat(64)

  it("are hashed with an HMAC-SHA-256 over purpose, registration, email and code", () => {
    const hash = otpHash(key, base)
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
    expect(hash).toBe(otpHash(key, { ...base }))
    expect(hash).not.toContain(base.otp)
    const expected = createHmac("sha256", key)
      .update([base.purpose, base.registrationId, base.email, base.otp].join("\u0000"))
      .digest("hex")
    expect(hash).toBe(expected)
  })

  it("hash differently when any one part changes", () => {
    const hash = otpHash(key, base)
    const variants = [
      otpHash(key, { ...base, purpose: "verify" }),
      otpHash(key, { ...base, registrationId: "3f1c8a52-0c1e-4d8e-9a55-6f1f3c0d2b12" }),
      otpHash(key, { ...base, email: "ada@example.org" }),
      otpHash(key, { ...base, otp: "123457" }),
      otpHash(`${key}x`, base)
    ]
    for (const variant of variants) expect(variant).not.toBe(hash)
    expect(new Set(variants).size).toBe(variants.length)
  })

  it("hash differently when characters move between parts", () => {
    const a = otpHash(key, { purpose: "claim", registrationId: "ab", email: "c@d.e", otp: "123456" })
    const b = otpHash(key, { purpose: "claim", registrationId: "a", email: "bc@d.e", otp: "123456" })
    const c = otpHash(key, { purpose: "clai", registrationId: "mab", email: "c@d.e", otp: "123456" })
    expect(new Set([a, b, c]).size).toBe(3)
  })
})

describe("hashes", () => {
  it("sha256 is the hex SHA-256 of the text", () => {
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    const token = newToken()
    expect(sha256(token)).toBe(createHash("sha256").update(token).digest("hex"))
  })

  it("sameHash compares exactly, whatever the lengths", () => {
    const hash = sha256("x")
    expect(sameHash(hash, sha256("x"))).toBe(true)
    expect(sameHash(hash, sha256("y"))).toBe(false)
    expect(sameHash(hash, hash.slice(0, -1))).toBe(false)
    expect(sameHash(hash, `${hash}0`)).toBe(false)
    expect(sameHash("", "")).toBe(true)
  })
})
