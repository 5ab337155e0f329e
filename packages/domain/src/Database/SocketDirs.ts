/**
 * The embedded database's socket folders (`dock-pg-*` in the OS temp directory): each records the pid of the
 * process that made it, and a start removes the folders whose owner is gone (a SIGKILL leaves its folder behind,
 * with a dead socket in it). Never another live instance's, never a folder that is not ours.
 */
import { Clock, Effect } from "effect"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Path from "node:path"
import * as Process from "node:process"

export const SOCKET_DIR_PREFIX = "dock-pg-"
/** The file in a socket folder that holds its owner's pid. */
export const OWNER_FILE = "owner.pid"
export const SOCKET_FILE = ".s.PGSQL.5432"
/**
 * A folder without an owner file (made by a version before this one, or by a start that is between creating the
 * folder and writing the file) is left alone while it is younger than this.
 */
const UNOWNED_AGE_MS = 60_000

/** Whether a process with this pid may exist: only ESRCH says it does not (EPERM: it does, as another user's). */
const alive = (pid: number) => {
  try {
    Process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { readonly code?: unknown }).code !== "ESRCH"
  }
}

/** Whether nothing listens on the unix socket at `path`: a refused or missing socket is dead. */
const socketDead = (path: string) =>
  new Promise<boolean>((resolve) => {
    const socket = Net.connect({ path })
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", (error: { readonly code?: unknown }) =>
      resolve(error.code === "ECONNREFUSED" || error.code === "ENOENT"))
  })

const ownerPid = (dir: string) =>
  Fs.readFile(Path.join(dir, OWNER_FILE), "utf8").then((text) => {
    const pid = Number(text.trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  }, () => undefined)

/** Whether the folder at `dir` (named with our prefix) belongs to no live process and may be removed. */
const isStale = async (dir: string, now: number) => {
  const stat = await Fs.lstat(dir)
  if (!stat.isDirectory()) return false
  // Only this user's folders: another user's are not ours to judge (and the sticky temp directory forbids it).
  if (typeof Process.getuid === "function" && stat.uid !== Process.getuid()) return false
  const pid = await ownerPid(dir)
  if (pid !== undefined) return pid !== Process.pid && !alive(pid)
  return now - stat.mtimeMs > UNOWNED_AGE_MS && await socketDead(Path.join(dir, SOCKET_FILE))
}

/**
 * Removes the stale `dock-pg-*` folders in `root` (the OS temp directory in production, a test's own directory in
 * tests) and returns their paths. Best effort: a folder it cannot judge or remove is left where it is.
 */
export const removeStaleSocketDirs = (root: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.promise(() => removeStale(root, now)))

const removeStale = async (root: string, now: number) => {
  const names = await Fs.readdir(root).catch(() => [] as Array<string>)
  const removed: Array<string> = []
  for (const name of names.filter((name) => name.startsWith(SOCKET_DIR_PREFIX))) {
    const dir = Path.join(root, name)
    const stale = await isStale(dir, now).catch(() => false)
    if (!stale) continue
    const gone = await Fs.rm(dir, { recursive: true, force: true }).then(() => true, () => false)
    if (gone) removed.push(dir)
  }
  return removed
}

/** A fresh 0700 socket folder in `root`, with this process's pid in its owner file. */
export const makeSocketDir = async (root: string) => {
  const dir = await Fs.mkdtemp(Path.join(root, SOCKET_DIR_PREFIX))
  await Fs.writeFile(Path.join(dir, OWNER_FILE), `${Process.pid}\n`, { mode: 0o600 })
  return dir
}
