/**
 * `dock members add|list|remove` in real processes against an in-process server: the `--json` documents
 * (`{bucket_id, user_id, username, role}`), the human lines, the default role, and failures as exit code 1 with
 * one line on stderr and nothing on stdout.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { adminOf, unique } from "./support/Admin.ts"
import { dock, failureLine, jsonOf } from "./support/Dock.ts"
import { cliTestServer, serverUrl } from "./support/Server.ts"

const ADMIN_TOKEN = "dock_admin_cli-members-test-token"
const admin = adminOf(ADMIN_TOKEN, "mem")
const adminFlags = admin.flags
const createUser = admin.createUser
const TIMEOUT = 120_000

const { RunningServer } = (() => {
  const server = cliTestServer("members", ADMIN_TOKEN)
  afterAll(() => Fs.rmSync(server.dataDir, { recursive: true, force: true }))
  return server
})()

/** GET /admin/members?dock= straight over HTTP, to check what a command did without another process. */
const membersOf = (url: string, dockName: string) =>
  admin.get<Array<{ bucket_id: string; user_id: string; username: string; role: string }>>(
    url,
    `/admin/members?dock=${encodeURIComponent(dockName)}`
  )

/** POST /admin/members straight over HTTP. */
const grantOverHttp = (url: string, dockName: string, user: string, role: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/admin/members`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ dock: dockName, user, role })
    })
    expect(response.status).toBe(201)
  })

const byUserId = (a: { user_id: string }, b: { user_id: string }) => a.user_id.localeCompare(b.user_id)

layer(RunningServer, { timeout: TIMEOUT, excludeTestServices: true })("dock members", (it) => {
  it.effect(
    "add --json prints {bucket_id, user_id, username, role}; list and remove print the same documents",
    () =>
      Effect.gen(function*() {
        const url = yield* serverUrl
        const owner = yield* createUser(url)
        const viewer = yield* createUser(url)
        const editor = yield* createUser(url)
        const path = `${owner.username}/${owner.username}`

        const added = jsonOf(
          yield* dock([
            "members",
            "add",
            "--dock",
            path,
            "--user",
            viewer.username,
            "--role",
            "viewer",
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(Object.keys(added).sort()).toEqual(["bucket_id", "role", "user_id", "username"])
        expect(added).toEqual({
          bucket_id: owner.default_bucket_id,
          user_id: viewer.id,
          username: viewer.username,
          role: "viewer"
        })

        // without --role the grant is editor; the Dock by id, the user by email
        const defaulted = jsonOf(
          yield* dock([
            "members",
            "add",
            "--dock",
            owner.default_bucket_id,
            "--user",
            editor.email,
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(defaulted).toEqual({
          bucket_id: owner.default_bucket_id,
          user_id: editor.id,
          username: editor.username,
          role: "editor"
        })

        const listed = jsonOf(yield* dock(["members", "list", "--dock", path, ...adminFlags(url), "--json"]))
        expect([...listed].sort(byUserId)).toEqual([added, defaulted].sort(byUserId))

        const removed = jsonOf(
          yield* dock([
            "members",
            "remove",
            "--dock",
            path,
            "--user",
            viewer.id,
            ...adminFlags(url),
            "--json"
          ])
        )
        expect(removed).toEqual(added)
        expect(yield* membersOf(url, owner.default_bucket_id)).toEqual([defaulted])
      }),
    TIMEOUT
  )

  it.effect("human output: Granted, the list lines, Removed and No collaborators", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* createUser(url)
      const user = yield* createUser(url)
      const path = `${owner.username}/${owner.username}`
      const member = `${user.username}  viewer  (user ${user.id}, Dock ${owner.default_bucket_id})`

      const granted = yield* dock(["members", "add", "--dock", path, "--user", user.username, "--role", "viewer"], {
        DOCK_ADMIN_TOKEN: ADMIN_TOKEN,
        DOCK_BASE_URL: url
      })
      expect(granted.code, granted.stderr).toBe(0)
      expect(granted.stdout.trim()).toBe(`Granted ${member}`)

      const listed = yield* dock(["members", "list", "--dock", path, ...adminFlags(url)])
      expect(listed.code).toBe(0)
      expect(listed.stdout.trim()).toBe(member)

      const removed = yield* dock(["members", "remove", "--dock", path, "--user", user.username, ...adminFlags(url)])
      expect(removed.code).toBe(0)
      expect(removed.stdout.trim()).toBe(`Removed ${member}`)

      const empty = yield* dock(["members", "list", "--dock", path, ...adminFlags(url)])
      expect(empty.code).toBe(0)
      expect(empty.stdout.trim()).toBe("No collaborators")
    }), TIMEOUT)

  it.effect("re-adding with another role changes it", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* createUser(url)
      const user = yield* createUser(url)
      yield* grantOverHttp(url, owner.default_bucket_id, user.username, "viewer")
      const changed = jsonOf(
        yield* dock([
          "members",
          "add",
          "--dock",
          owner.default_bucket_id,
          "--user",
          user.username,
          "--role",
          "editor",
          ...adminFlags(url),
          "--json"
        ])
      )
      const expected = { bucket_id: owner.default_bucket_id, user_id: user.id, username: user.username, role: "editor" }
      expect(changed).toEqual(expected)
      expect(yield* membersOf(url, owner.default_bucket_id)).toEqual([expected])
    }), TIMEOUT)

  it.effect("errors are exit code 1 with one line on stderr naming the code", () =>
    Effect.gen(function*() {
      const url = yield* serverUrl
      const owner = yield* createUser(url)
      const user = yield* createUser(url)
      const path = `${owner.username}/${owner.username}`
      const nobody = `nobody-${unique()}`

      expect(
        failureLine(yield* dock(["members", "add", "--dock", path, "--user", nobody, ...adminFlags(url), "--json"]))
      )
        .toBe(`dock: not_found: No user "${nobody}"`)
      const missingDock = `${owner.username}/no-such-${unique()}`
      expect(failureLine(yield* dock(["members", "list", "--dock", missingDock, ...adminFlags(url), "--json"])))
        .toBe(`dock: not_found: No Dock "${missingDock}"`)
      expect(
        failureLine(
          yield* dock(["members", "add", "--dock", owner.username, "--user", user.username, ...adminFlags(url)])
        )
      )
        .toBe(`dock: validation_error: Name the Dock by its id or as owner/slug, not "${owner.username}"`)
      expect(
        failureLine(
          yield* dock(["members", "add", "--dock", path, "--user", owner.email, ...adminFlags(url), "--json"])
        )
      )
        .toMatch(/^dock: validation_error: /)
      expect(
        failureLine(
          yield* dock(["members", "remove", "--dock", path, "--user", user.username, ...adminFlags(url), "--json"])
        )
      )
        .toMatch(/^dock: not_found: /)
      // only the Dock's owner is ever owner: the CLI offers no owner role, and the API refuses one
      const ownerRole = yield* dock([
        "members",
        "add",
        "--dock",
        path,
        "--user",
        user.username,
        "--role",
        "owner",
        ...adminFlags(url)
      ])
      expect(ownerRole.code).not.toBe(0)
      const refused = yield* Effect.promise(() =>
        fetch(`${url}/admin/members`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify({ dock: path, user: user.username, role: "owner" })
        })
      )
      expect(refused.status).toBe(400)
      expect(yield* membersOf(url, path)).toEqual([])
    }), TIMEOUT)
})
