#!/usr/bin/env node
/**
 * Adds the lock entries that `npm install` leaves out for other platforms' optional binaries (@deno/*,
 * @rollup/rollup-*, …) and that `npm ci` then demands ("Missing: … from lock file"). The npm registry this
 * workplace reaches does not hold every version of every platform binary, so npm drops them when it resolves;
 * the entries only record name, pinned version and platform, and npm ci skips them on non-matching machines.
 * Run after every `npm install`: `node scripts/complete-lockfile.mjs`.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"

const file = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(Fs.readFileSync(file, "utf8"))
let added = 0

for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`
    if (lock.packages[key] !== undefined || lock.packages[`${path}/${key}`] !== undefined) continue
    // Platform fields from the registry (the pinned version when it is there, else the newest one).
    let meta = {}
    for (const spec of [`${name}@${version}`, name]) {
      try {
        const out = execFileSync("npm", ["view", spec, "os", "cpu", "libc", "license", "--json"], {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"]
        }).trim()
        if (out !== "") {
          meta = JSON.parse(out)
          break
        }
      } catch {
        // try the next spec
      }
    }
    lock.packages[key] = {
      version,
      ...(meta.cpu ? { cpu: [meta.cpu].flat() } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(meta.libc ? { libc: [meta.libc].flat() } : {}),
      ...(meta.license ? { license: meta.license } : {}),
      optional: true,
      ...(meta.os ? { os: [meta.os].flat() } : {})
    }
    added++
  }
}

lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b)))
)
Fs.writeFileSync(file, JSON.stringify(lock, null, 2) + "\n")
console.log(`complete-lockfile: added ${added} optional platform entries`)
