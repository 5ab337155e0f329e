/**
 * Judges one conformance run (`conformance server --requirements <revision> -o <dir>`) for scripts/conformance.sh.
 *
 *   node verdict.mjs <conformance package dir> <label> <revision> <results dir> [exclusion]...
 *
 * With the revision `authorization` it judges a `conformance authorization -o <dir>` run instead: the suite has
 * no requirement set for authorization servers, so both of its scenarios (`authorization-server-metadata-endpoint`
 * and `authorization-code-grant`) must have a result, and every check must be SUCCESS (a WARNING, or the SKIPPED
 * the code grant reports without --client-id, fails too).
 *
 * An exclusion is `<scenario>` (the whole scenario does not apply to Dock) or `<scenario>:<check-id>` (that one
 * check does not apply; every occurrence of the id in the scenario). Every scenario the revision's requirement
 * set names for servers (required and not_scored alike) must have a result; a scenario that is not excluded
 * fails when any of its checks, other than excluded ones, has status FAILURE (WARNING, INFO and SKIPPED do
 * not fail). Prints one line per scenario, the failing checks with their messages, and exits 1 on any failure.
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"

const [packageDir, label, revision, resultsDir, ...exclusions] = process.argv.slice(2)
if (resultsDir === undefined) {
  console.error("usage: node verdict.mjs <conformance package dir> <label> <revision> <results dir> [exclusion]...")
  process.exit(2)
}

const AUTHORIZATION = revision === "authorization"
const AUTHORIZATION_SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"]

// The scenarios the revision names for the server leg, from the package's frozen requirement set.
const YAML = createRequire(Path.resolve(packageDir, "package.json"))("yaml")
const requirements = AUTHORIZATION
  ? { server: AUTHORIZATION_SCENARIOS }
  : YAML.parse(Fs.readFileSync(Path.join(packageDir, "requirements", `${revision}.yaml`), "utf8"))
const notScored = new Map(
  (requirements.not_scored ?? []).filter((entry) => entry.leg === "server").map((
    entry
  ) => [entry.scenario, entry.reason])
)
const expected = [...(requirements.server ?? []), ...notScored.keys()]

const excludedScenarios = new Set(exclusions.filter((entry) => !entry.includes(":")))
const excludedChecks = new Set(exclusions.filter((entry) => entry.includes(":")))

// Results: <dir>/server-<scenario>-<ISO timestamp with dashes>/checks.json (authorization-server-… for the
// authorization runs)
const results = new Map()
const resultPattern = AUTHORIZATION
  ? /^authorization-server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/
  : /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/
for (const entry of Fs.existsSync(resultsDir) ? Fs.readdirSync(resultsDir).sort() : []) {
  const match = resultPattern.exec(entry)
  const file = Path.join(resultsDir, entry, "checks.json")
  if (match !== null && Fs.existsSync(file)) results.set(match[1], JSON.parse(Fs.readFileSync(file, "utf8")))
}
for (const scenario of results.keys()) if (!expected.includes(scenario)) expected.push(scenario)

const oneLine = (value, max = 600) => {
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return text === undefined ? "" : text.length > max ? `${text.slice(0, max)}…` : text
}
const tally = { passed: 0, failed: 0, excluded: 0, excludedPassing: [] }
const lines = []
for (const scenario of expected) {
  const checks = results.get(scenario)
  const tag = notScored.has(scenario) ? ` (not scored upstream: ${notScored.get(scenario)})` : ""
  if (excludedScenarios.has(scenario)) {
    tally.excluded += 1
    if (checks !== undefined && checks.every((check) => check.status !== "FAILURE")) {
      tally.excludedPassing.push(scenario)
    }
    continue
  }
  if (checks === undefined) {
    tally.failed += 1
    lines.push(`  ✗ ${scenario}${tag}: NO RESULT (the run did not produce checks.json for it)`)
    continue
  }
  const counted = checks.filter((check) => !excludedChecks.has(`${scenario}:${check.id}`))
  // Authorization runs are strict: anything but SUCCESS (a WARNING, a SKIPPED) fails.
  const failures = counted.filter((check) => AUTHORIZATION ? check.status !== "SUCCESS" : check.status === "FAILURE")
  const warnings = AUTHORIZATION ? [] : counted.filter((check) => check.status === "WARNING")
  const passedChecks = counted.filter((check) => check.status === "SUCCESS").length
  const skipped = checks.length - counted.length
  const counts = `${passedChecks} checks passed, ${failures.length} failed, ${warnings.length} warnings` +
    (skipped > 0 ? `, ${skipped} excluded` : "")
  if (failures.length === 0) {
    tally.passed += 1
    lines.push(`  ✓ ${scenario}${tag}: ${counts}`)
  } else {
    tally.failed += 1
    lines.push(`  ✗ ${scenario}${tag}: ${counts}`)
    for (const check of failures) {
      lines.push(`      ${check.status} ${check.id}: ${oneLine(check.errorMessage ?? check.description)}`)
      if (check.details !== undefined) lines.push(`        details: ${oneLine(check.details)}`)
    }
  }
  for (const check of warnings) {
    lines.push(`      warning ${check.id}: ${oneLine(check.errorMessage ?? check.description, 300)}`)
  }
  // A per-check exclusion whose check passes here is no longer needed.
  for (const check of checks) {
    if (excludedChecks.has(`${scenario}:${check.id}`) && check.status === "SUCCESS") {
      lines.push(`      note: excluded check ${check.id} passes now; consider removing its exclusion`)
    }
  }
}

console.log(
  AUTHORIZATION
    ? `\n--- ${label}: the authorization server scenarios ---`
    : `\n--- ${label}: MCP ${revision} requirement set ---`
)
for (const line of lines) console.log(line)
console.log(
  `  ${label}: ${tally.passed} applicable scenarios passed, ${tally.failed} failed; ${tally.excluded} excluded as not applicable` +
    (tally.excludedPassing.length > 0 ? ` (of which passing anyway: ${tally.excludedPassing.join(", ")})` : "")
)
process.exit(tally.failed === 0 ? 0 : 1)
