/** What CLI tests do around `dock` itself: the admin flags, users made and state read over the admin API. */
import { expect } from "@effect/vitest"
import { Effect } from "effect"

export interface AdminUser {
  readonly id: string
  readonly username: string
  readonly email: string
  readonly default_bucket_id: string
}

export const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 10)

/** Admin helpers for a server whose admin token is `adminToken`; usernames start with `prefix`. */
export const adminOf = (adminToken: string, prefix: string) => ({
  /** The flags every admin command gets. */
  flags: (url: string) => ["--url", url, "--admin-token", adminToken],
  /** A confirmed person made through the admin API; their default Dock is `username/username`. */
  createUser: (url: string) =>
    Effect.promise(async () => {
      const username = `${prefix}-${unique()}`
      const response = await fetch(`${url}/admin/users`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${adminToken}` },
        body: JSON.stringify({ email: `${username}@example.com`, username })
      })
      expect(response.status).toBe(201)
      return (await response.json()) as AdminUser
    }),
  /** GET an admin path straight over HTTP, to check what a command did without another process. */
  get: <A>(url: string, path: string) =>
    Effect.promise(async () => {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${adminToken}` } })
      expect(response.status).toBe(200)
      return (await response.json()) as A
    })
})
