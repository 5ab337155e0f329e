// What makes two calls "the same call" for an idempotency_key (canonical JSON and its fingerprint), and whose keys a
// principal uses. The rules over the database are proven over the wire in server/test/McpIdempotency.test.ts.
import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, fingerprintOf, ownerOf } from "../src/Idempotency/Idempotency.ts"
import type { TokenId, UserId } from "../src/Ids.ts"
import { anonymousPrincipal, userPrincipal } from "../src/Principal.ts"

describe("canonicalJson and fingerprintOf", () => {
  it("sorts object keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } })).toBe(
      "{\"a\":{\"c\":null,\"d\":[2,{\"y\":2,\"z\":1}]},\"b\":1}"
    )
    expect(fingerprintOf({ b: 1, a: [1, 2] })).toBe(fingerprintOf({ a: [1, 2], b: 1 }))
    expect(fingerprintOf({ a: [1, 2] })).not.toBe(fingerprintOf({ a: [2, 1] }))
    expect(fingerprintOf({ a: "1" })).not.toBe(fingerprintOf({ a: 1 }))
    expect(fingerprintOf({})).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe("ownerOf", () => {
  const user = { id: "4f1c2a53-6a0e-4c39-9d47-2f0d1c7e8b10" as UserId, username: "ada" }
  it("is the token's id, else the user's, else none", () => {
    const tokenId = "0b7e6c1d-3f2a-4e5b-8c9d-a1b2c3d4e5f6" as TokenId
    expect(ownerOf(userPrincipal(user, { tokenId }))).toBe(tokenId)
    expect(ownerOf(userPrincipal(user))).toBe(`user:${user.id}`)
    expect(ownerOf(anonymousPrincipal)).toBeUndefined()
  })
})
