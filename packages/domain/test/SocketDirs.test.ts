// Stale embedded-database socket folders: a `dock-pg-*` folder whose owner process is gone (or, without an owner
// file, whose socket nobody listens on) is removed at the next start; a live owner's folder, a young folder without
// an owner file, and anything not named like ours are kept. Each test works in its own directory, never in the
// temp directory other instances use.
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeSocketDir, OWNER_FILE, removeStaleSocketDirs, SOCKET_FILE } from "../src/Database/SocketDirs.ts"

const scopedRoot = Effect.acquireRelease(
  Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "dock-socketdirs-test-"))),
  (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
)

/** The pid of a process that has run and exited (and been reaped): nobody has it now. */
const deadPid = Effect.async<number>((resume) => {
  const child = ChildProcess.spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
  child.once("exit", () => resume(Effect.succeed(child.pid!)))
})

/** A process that stays alive until the scope closes. */
const livePid = Effect.acquireRelease(
  Effect.sync(() => ChildProcess.spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })),
  (child) => Effect.sync(() => void child.kill("SIGKILL"))
).pipe(Effect.map((child) => child.pid!))

const folder = (root: string, name: string, owner?: number) => {
  const dir = Path.join(root, name)
  Fs.mkdirSync(dir, { mode: 0o700 })
  if (owner !== undefined) Fs.writeFileSync(Path.join(dir, OWNER_FILE), `${owner}\n`)
  return dir
}

/**
 * What a SIGKILL leaves: a process listened on a unix socket at `path` and was killed, so the socket file remains
 * with nobody behind it. Returns the dead process's pid.
 */
const killedListener = (path: string) =>
  Effect.async<number>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [
      "-e",
      "require('node:net').createServer().listen(process.argv[1], () => console.log('listening'))",
      path
    ], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout.once("data", () => child.kill("SIGKILL"))
    child.once("exit", () => resume(Effect.succeed(child.pid!)))
  })

const liveSocket = (path: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<Net.Server>((resolve) => {
        const server = Net.createServer((socket) => socket.destroy()).listen(path, () => resolve(server))
      })
    ),
    (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

const exists = (path: string) => Fs.existsSync(path)

describe("stale embedded-database socket folders", () => {
  it.scoped("a folder whose owner process is gone is removed; a live owner's and our own are kept", () =>
    Effect.gen(function*() {
      const root = yield* scopedRoot
      const dead = folder(root, "dock-pg-dead")
      const killed = yield* killedListener(Path.join(dead, SOCKET_FILE))
      Fs.writeFileSync(Path.join(dead, OWNER_FILE), `${killed}\n`)
      expect(exists(Path.join(dead, SOCKET_FILE))).toBe(true)
      const live = folder(root, "dock-pg-live", yield* livePid)
      const ours = folder(root, "dock-pg-ours", process.pid)
      // Not ours by name, even with a dead owner.
      const other = folder(root, "other-pg-dead", yield* deadPid)

      const removed = yield* removeStaleSocketDirs(root)
      expect(removed).toEqual([dead])
      expect([exists(dead), exists(live), exists(ours), exists(other)]).toEqual([false, true, true, true])
    }))

  it.scoped("made by makeSocketDir: the owner file holds this pid, and the folder is kept while we live", () =>
    Effect.gen(function*() {
      const root = yield* scopedRoot
      const dir = yield* Effect.promise(() => makeSocketDir(root))
      expect(Path.basename(dir)).toMatch(/^dock-pg-/)
      expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
      expect(Fs.readFileSync(Path.join(dir, OWNER_FILE), "utf8").trim()).toBe(String(process.pid))
      expect(yield* removeStaleSocketDirs(root)).toEqual([])
      expect(exists(dir)).toBe(true)
    }))

  it.scoped("without an owner file: removed once old with a dead socket; kept while young or while listened on", () =>
    Effect.gen(function*() {
      const root = yield* scopedRoot
      const deadOld = folder(root, "dock-pg-old-dead")
      yield* killedListener(Path.join(deadOld, SOCKET_FILE))
      expect(exists(Path.join(deadOld, SOCKET_FILE))).toBe(true)
      const liveOld = folder(root, "dock-pg-old-live")
      yield* liveSocket(Path.join(liveOld, SOCKET_FILE))
      const young = folder(root, "dock-pg-young")

      // Young (the clock at the folders' creation): nothing is touched, whatever the socket.
      yield* TestClock.setTime(Date.now())
      expect(yield* removeStaleSocketDirs(root)).toEqual([])
      expect([exists(deadOld), exists(liveOld), exists(young)]).toEqual([true, true, true])

      // Two minutes later: the dead socket's folder and the empty one go, the listened-on one stays.
      yield* TestClock.setTime(Date.now() + 120_000)
      const removed = yield* removeStaleSocketDirs(root)
      expect([...removed].sort()).toEqual([deadOld, young].sort())
      expect([exists(deadOld), exists(liveOld), exists(young)]).toEqual([false, true, false])
    }))
})
