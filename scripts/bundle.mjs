// `npm start` and `npm run dock` run bundle/: the server, the CLI and the content worker, each one ES module file
// (plus shared chunks) built from the TypeScript sources by esbuild. Node 20 spends most of a start loading modules
// one by one (the server loads about 1,100; through tsx, each also crosses to tsx's loader thread): as one bundle
// the server starts on less than half the CPU time and memory. Built when missing or older than any source it was
// built from (the last build's list of inputs, bundle/meta.json), so an unchanged tree starts straight away.
// Nothing is type-checked here (`npm run typecheck` does that), as nothing was when tsx ran the sources.
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const outdir = Path.join(root, "bundle")
const meta = Path.join(outdir, "meta.json")

/** True when the last build's outputs are newer than every file it was built from (and this script). */
const upToDate = () => {
  let built
  try {
    built = Fs.statSync(meta).mtimeMs
  } catch {
    return false
  }
  const inputs = Object.keys(JSON.parse(Fs.readFileSync(meta, "utf8")).inputs)
  return [...inputs.map((input) => Path.join(root, input)), Path.join(root, "package-lock.json"), import.meta.filename]
    .every((file) => {
      try {
        return Fs.statSync(file).mtimeMs < built
      } catch {
        return false
      }
    })
}

if (!upToDate()) {
  Fs.rmSync(outdir, { recursive: true, force: true })
  // Loaded only to build: the check above is all an unchanged tree costs.
  const esbuild = await import("esbuild")
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: {
      main: "packages/server/src/main.ts",
      bin: "packages/cli/src/bin.ts",
      // Next to the chunk that starts it: ContentWorkers.ts looks for ./ContentWorker.js beside itself.
      ContentWorker: "packages/domain/src/Content/ContentWorker.ts"
    },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["dock-source"],
    sourcemap: "linked",
    metafile: true,
    logLevel: "warning",
    // The web app's TSX (packages/server/src/web): Preact's automatic runtime, as each file's pragma says.
    jsx: "automatic",
    jsxImportSource: "preact",
    // Loaded from node_modules at run time: PGlite and sharp find their WASM and native files next to themselves,
    // nodemailer is loaded only with SMTP, and HtmlSanitizer.ts takes its tokenizer from the very htmlparser2 copy
    // that sanitize-html loads.
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "sharp", "nodemailer", "sanitize-html"],
    // CommonJS dependencies bundled into ES modules still call `require` for Node's own modules.
    banner: {
      js:
        "import { createRequire as __bundleRequire } from \"node:module\"; const require = __bundleRequire(import.meta.url);"
    }
  })
  Fs.writeFileSync(meta, JSON.stringify({ inputs: result.metafile.inputs }))
}
