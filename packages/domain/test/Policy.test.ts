// The permission policy as one table: every kind of caller against a private and a public Dock, with the
// outcome of every check. Not visible ≡ not existing; permission_denied only for callers who can see the Dock.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type DockError, errorBody } from "../src/Errors.ts"
import type { DockId, TokenId, UserId } from "../src/Ids.ts"
import {
  canRead,
  checkCreateDock,
  checkDeleteDock,
  checkOwner,
  checkPublish,
  checkRead,
  checkWrite,
  type DockAccess,
  type Role,
  roleOf,
  type Visibility
} from "../src/Policy.ts"
import { anonymousPrincipal, hasScope, type Principal, userPrincipal } from "../src/Principal.ts"

const userId = () => crypto.randomUUID() as UserId
const dockId = () => crypto.randomUUID() as DockId
const tokenId = () => crypto.randomUUID() as TokenId

const thisDock = dockId()
const otherDock = dockId()
const owner = { id: userId(), username: "owner" }
const editor = { id: userId(), username: "editor" }
const viewer = { id: userId(), username: "viewer" }
const stranger = { id: userId(), username: "stranger" }
/** An anonymous sandbox user: owns its sandbox Dock, and its token is confined to it. */
const sandboxUser = { id: userId(), username: "sandbox-user" }

type Code = "ok" | "not_found" | "permission_denied" | "unauthorized"

/** Runs a policy check synchronously and reduces it to "ok" or its error code. */
const outcome = (check: Effect.Effect<void, DockError>): Code =>
  Either.match(Effect.runSync(Effect.either(check)), {
    onLeft: (error) => error.code as Code,
    onRight: () => "ok"
  })

interface Expected {
  readonly role: Role | null
  readonly read: Code
  readonly write: Code
  readonly owner: Code
  readonly publish: Code
}

interface Row {
  readonly caller: string
  readonly principal: Principal
  /** Who owns the Dock under test, and the caller's grant on it. */
  readonly ownerId: UserId
  readonly grant: Role | null
  readonly create: Code
  readonly private: Expected
  readonly public: Expected
}

const same = (expected: Expected) => ({ private: expected, public: expected })
const invisible: Expected = {
  role: null,
  read: "not_found",
  write: "not_found",
  owner: "not_found",
  publish: "not_found"
}
const readOnlyView = (role: Role | null): Expected => ({
  role,
  read: "ok",
  write: "permission_denied",
  owner: "permission_denied",
  publish: "permission_denied"
})
const everything = (role: Role): Expected => ({ role, read: "ok", write: "ok", owner: "ok", publish: "ok" })

const table: ReadonlyArray<Row> = [
  {
    caller: "an anonymous reader",
    principal: anonymousPrincipal,
    ownerId: owner.id,
    grant: null,
    create: "unauthorized",
    private: invisible,
    public: { role: null, read: "ok", write: "unauthorized", owner: "unauthorized", publish: "unauthorized" }
  },
  {
    caller: "the owner",
    principal: userPrincipal(owner),
    ownerId: owner.id,
    grant: null,
    create: "ok",
    ...same(everything("owner"))
  },
  {
    caller: "an editor",
    principal: userPrincipal(editor),
    ownerId: owner.id,
    grant: "editor",
    create: "ok",
    ...same({ role: "editor", read: "ok", write: "ok", owner: "permission_denied", publish: "permission_denied" })
  },
  {
    caller: "a viewer",
    principal: userPrincipal(viewer),
    ownerId: owner.id,
    grant: "viewer",
    create: "ok",
    ...same(readOnlyView("viewer"))
  },
  {
    caller: "a stranger without a grant",
    principal: userPrincipal(stranger),
    ownerId: owner.id,
    grant: null,
    create: "ok",
    private: invisible,
    public: readOnlyView(null)
  },
  {
    caller: "the owner with a read-only token",
    principal: userPrincipal(owner, { tokenId: tokenId(), scopes: ["mcp:read"] }),
    ownerId: owner.id,
    grant: null,
    create: "permission_denied",
    ...same(readOnlyView("owner"))
  },
  {
    caller: "the owner with a token restricted to this Dock",
    principal: userPrincipal(owner, { tokenId: tokenId(), allowedBucketIds: [thisDock] }),
    ownerId: owner.id,
    grant: null,
    create: "permission_denied",
    ...same(everything("owner"))
  },
  {
    caller: "the owner with a token restricted to another Dock",
    principal: userPrincipal(owner, { tokenId: tokenId(), allowedBucketIds: [otherDock] }),
    ownerId: owner.id,
    grant: null,
    create: "permission_denied",
    ...same(readOnlyView("owner"))
  },
  {
    caller: "a sandbox token confined to this Dock",
    principal: userPrincipal(sandboxUser, { tokenId: tokenId(), sandbox: true, allowedBucketIds: [thisDock] }),
    ownerId: sandboxUser.id,
    grant: null,
    create: "permission_denied",
    ...same({ role: "owner", read: "ok", write: "ok", owner: "ok", publish: "permission_denied" })
  },
  {
    caller: "a sandbox token confined to another Dock",
    principal: userPrincipal(sandboxUser, { tokenId: tokenId(), sandbox: true, allowedBucketIds: [otherDock] }),
    ownerId: owner.id,
    grant: null,
    create: "permission_denied",
    private: invisible,
    public: readOnlyView(null)
  }
]

const accessFor = (row: Row, visibility: Visibility): DockAccess => ({
  dockId: thisDock,
  ownerId: row.ownerId,
  visibility,
  grant: row.grant
})

describe("Policy table", () => {
  for (const row of table) {
    for (const visibility of ["private", "public"] as const) {
      it(`${row.caller} on a ${visibility} Dock`, () => {
        const dock = accessFor(row, visibility)
        const expected = row[visibility]
        expect({
          role: roleOf(row.principal, dock),
          canRead: canRead(row.principal, dock),
          read: outcome(checkRead(row.principal, dock)),
          write: outcome(checkWrite(row.principal, dock)),
          owner: outcome(checkOwner(row.principal, dock)),
          publish: outcome(checkPublish(row.principal, dock)),
          create: outcome(checkCreateDock(row.principal))
        }).toEqual({ ...expected, canRead: expected.read === "ok", create: row.create })
      })
    }
  }

  it("covers every caller on both visibilities", () => {
    expect(table).toHaveLength(10)
    expect(new Set(table.map((row) => row.caller)).size).toBe(table.length)
  })

  it("gives an invisible Dock the very same not_found body for every check and every caller", () => {
    const bodies = table.flatMap((row) => {
      const dock = accessFor(row, "private")
      return [checkRead, checkWrite, checkOwner, checkPublish].flatMap((check) =>
        Either.match(Effect.runSync(Effect.either(check(row.principal, dock))), {
          onLeft: (error) => error.code === "not_found" ? [JSON.stringify(errorBody(error))] : [],
          onRight: () => []
        })
      )
    })
    // anonymous, stranger and the foreign sandbox token: four checks each
    expect(bodies).toHaveLength(12)
    expect(new Set(bodies)).toEqual(
      new Set([JSON.stringify({ error: { code: "not_found", status: 404, message: "Dock not found" } })])
    )
  })
})

describe("Policy rules beyond the table", () => {
  const privateDock = (ownerId: UserId, grant: Role | null = null): DockAccess => ({
    dockId: thisDock,
    ownerId,
    visibility: "private",
    grant
  })

  it("owning a Dock beats any grant on it", () => {
    expect(roleOf(userPrincipal(owner), privateDock(owner.id, "viewer"))).toBe("owner")
  })

  it("a grant stored with role owner acts as an editor: never owner powers", () => {
    const holder = userPrincipal({ id: crypto.randomUUID() as UserId, username: "holder" })
    const dock = privateDock(owner.id, "owner")
    expect(roleOf(holder, dock)).toBe("editor")
    expect(outcome(checkWrite(holder, dock))).toBe("ok")
    expect(outcome(checkOwner(holder, dock))).toBe("permission_denied")
    expect(outcome(checkDeleteDock(holder, dock))).toBe("permission_denied")
    expect(outcome(checkPublish(holder, dock, { grant: true }))).toBe("permission_denied")
    expect(outcome(checkPublish(holder, dock, { share: true }))).toBe("permission_denied")
  })

  it("an anonymous principal has no role even if a grant is passed", () => {
    expect(roleOf(anonymousPrincipal, privateDock(owner.id, "editor"))).toBeNull()
    expect(canRead(anonymousPrincipal, privateDock(owner.id, "editor"))).toBe(false)
  })

  it("mcp:write implies mcp:read", () => {
    const writeOnly = userPrincipal(owner, { scopes: ["mcp:write"] })
    expect(hasScope(writeOnly, "mcp:read")).toBe(true)
    expect(hasScope(userPrincipal(owner, { scopes: ["mcp:read"] }), "mcp:write")).toBe(false)
    expect(outcome(checkRead(writeOnly, privateDock(owner.id)))).toBe("ok")
    expect(outcome(checkWrite(writeOnly, privateDock(owner.id)))).toBe("ok")
    expect(outcome(checkPublish(writeOnly, privateDock(owner.id)))).toBe("ok")
  })

  it("a read-only editor token is refused writes with permission_denied, not a role error", () => {
    const error = Effect.runSync(
      Effect.flip(checkWrite(userPrincipal(editor, { scopes: ["mcp:read"] }), privateDock(owner.id, "editor")))
    )
    expect(error.code).toBe("permission_denied")
    expect(error.message).toMatch(/mcp:write/)
  })

  it("an editor's token restricted to this Dock may write but not act as owner", () => {
    const principal = userPrincipal(editor, { allowedBucketIds: [thisDock] })
    expect(outcome(checkWrite(principal, privateDock(owner.id, "editor")))).toBe("ok")
    expect(outcome(checkOwner(principal, privateDock(owner.id, "editor")))).toBe("permission_denied")
  })

  it("a token restricted to no Dock at all can write nowhere and create nothing", () => {
    const principal = userPrincipal(owner, { allowedBucketIds: [] })
    expect(outcome(checkRead(principal, privateDock(owner.id)))).toBe("ok")
    expect(outcome(checkWrite(principal, privateDock(owner.id)))).toBe("permission_denied")
    expect(outcome(checkCreateDock(principal))).toBe("permission_denied")
  })

  it("a restricted token's refusal names the Docks it is allowed", () => {
    const error = Effect.runSync(
      Effect.flip(checkWrite(userPrincipal(owner, { allowedBucketIds: [otherDock] }), privateDock(owner.id)))
    )
    expect(errorBody(error)).toEqual({
      error: {
        code: "permission_denied",
        status: 403,
        message: "This token is restricted to other Docks (allowed_bucket_ids)",
        details: { allowed_bucket_ids: [otherDock] }
      }
    })
  })

  it("a sandbox token writing outside its sandbox is told so", () => {
    const principal = userPrincipal(sandboxUser, { sandbox: true, allowedBucketIds: [otherDock] })
    const error = Effect.runSync(Effect.flip(checkWrite(principal, privateDock(sandboxUser.id))))
    expect(error.code).toBe("permission_denied")
    expect(error.message).toMatch(/sandbox/)
    expect(error.details).toEqual({ allowed_bucket_ids: [otherDock] })
  })

  it("a sandbox token cannot create a Dock even with full scopes and no restriction", () => {
    const error = Effect.runSync(Effect.flip(checkCreateDock(userPrincipal(sandboxUser, { sandbox: true }))))
    expect(error.code).toBe("permission_denied")
    expect(error.status).toBe(403)
  })

  it("an anonymous caller asked to create a Dock gets unauthorized (401)", () => {
    const error = Effect.runSync(Effect.flip(checkCreateDock(anonymousPrincipal)))
    expect(error.code).toBe("unauthorized")
    expect(error.status).toBe(401)
  })
})

describe("a sandbox principal without its Dock list", () => {
  it("is confined to nothing: writes and creates are permission_denied", () => {
    const user = { id: crypto.randomUUID() as UserId, username: "sandboxed" }
    const principal = userPrincipal(user, { sandbox: true })
    const dock: DockAccess = {
      dockId: crypto.randomUUID() as DockId,
      ownerId: user.id,
      visibility: "private",
      grant: null
    }
    const write = Effect.runSync(Effect.either(checkWrite(principal, dock)))
    expect(write._tag === "Left" && write.left.code).toBe("permission_denied")
    const create = Effect.runSync(Effect.either(checkCreateDock(principal)))
    expect(create._tag === "Left" && create.left.code).toBe("permission_denied")
  })
})
