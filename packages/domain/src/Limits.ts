/**
 * Limits that rules enforce (settings that are not limits live in Settings.ts): the spec's anonymous-sandbox defaults and our free plan (architecture §11).
 * The server fills it from configuration; tests provide `Limits.defaults` or tighter numbers.
 */
import { Context, Duration } from "effect"
import { availableParallelism } from "node:os"

export interface LimitValues {
  readonly sandboxClaimWindow: Duration.Duration
  readonly sandboxRetention: Duration.Duration
  readonly registrationsPerIpPerDay: number
  readonly registrationsPerHour: number
  /** OAuth dynamic client registrations per client address per hour (docs/oauth.md); 0 = unlimited */
  readonly oauthRegistrationsPerIpPerHour: number
  /** Client ID Metadata Document fetches (cache misses at /oauth/authorize) per client address per hour; 0 = unlimited */
  readonly oauthClientMetadataFetchesPerIpPerHour: number
  readonly sandboxMaxArtifacts: number
  readonly sandboxMaxBytes: number
  readonly sandboxWritesPerMinute: number
  readonly otpSendsPerHour: number
  readonly otpTtl: Duration.Duration
  readonly claimedTokenTtl: Duration.Duration
  /** 0 = unlimited */
  readonly tokenRequestsPerMinute: number
  /** 0 = unlimited */
  readonly tokenWritesPerMinute: number
  /** JSON-RPC messages per client address per minute on /mcp/public; 0 = unlimited */
  readonly publicMcpRequestsPerMinute: number
  /** Tool calls one caller (a token, or an address on /mcp/public) runs at once; more wait their turn */
  readonly toolCallsInFlightPerCaller: number
  readonly planMaxDocks: number
  readonly planMaxArtifactsPerDock: number
  readonly planMaxDockBytes: number
  readonly planMaxRowsPerTable: number
  readonly planMaxBulkRows: number
  readonly planSnapshotRetention: number
  /** How long one piece of untrusted content may take to parse, render or sanitize (ContentWorkers). */
  readonly renderDeadline: Duration.Duration
  /** Worker threads that do that work (by default one per core the process may use, at most 64). */
  readonly renderWorkers: number
}

export class Limits extends Context.Tag("@dock/domain/Limits")<Limits, LimitValues>() {
  static readonly defaults: LimitValues = {
    sandboxClaimWindow: Duration.days(14),
    sandboxRetention: Duration.days(7),
    registrationsPerIpPerDay: 5,
    registrationsPerHour: 200,
    oauthRegistrationsPerIpPerHour: 20,
    oauthClientMetadataFetchesPerIpPerHour: 30,
    sandboxMaxArtifacts: 25,
    sandboxMaxBytes: 10 * 1024 * 1024,
    sandboxWritesPerMinute: 60,
    otpSendsPerHour: 5,
    otpTtl: Duration.minutes(10),
    claimedTokenTtl: Duration.days(90),
    tokenRequestsPerMinute: 600,
    tokenWritesPerMinute: 120,
    publicMcpRequestsPerMinute: 300,
    toolCallsInFlightPerCaller: 4,
    planMaxDocks: 50,
    planMaxArtifactsPerDock: 5_000,
    planMaxDockBytes: 100 * 1024 * 1024,
    planMaxRowsPerTable: 50_000,
    planMaxBulkRows: 500,
    planSnapshotRetention: 20,
    renderDeadline: Duration.seconds(6),
    renderWorkers: Math.max(1, Math.min(64, availableParallelism()))
  }
}

/** "10 minutes", "14 days", "1 hour 30 minutes": durations as people write them (in mail and manifests). */
export const describeDuration = (duration: Duration.Duration): string => {
  let rest = Math.round(Duration.toSeconds(duration))
  const parts: Array<string> = []
  for (const [unit, seconds] of [["day", 86_400], ["hour", 3_600], ["minute", 60], ["second", 1]] as const) {
    const count = Math.floor(rest / seconds)
    if (count > 0) parts.push(`${count} ${unit}${count === 1 ? "" : "s"}`)
    rest -= count * seconds
  }
  return parts.length === 0 ? "0 seconds" : parts.join(" ")
}
