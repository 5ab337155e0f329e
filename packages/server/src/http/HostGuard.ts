/**
 * The Host check every request passes first: a Host header must be exactly one host[:port] this server answers
 * for, and the artifact origin (DOCK_ARTIFACT_ORIGIN on a host of its own) serves artifacts and nothing else.
 */
import { type DockError, Forbidden, NotFound } from "@dock/domain"
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"
import type { ServerConfig } from "../Config.ts"
import { isArtifactPath } from "./ArtifactPage.ts"

const LOOPBACK = ["localhost", "127.0.0.1", "[::1]", "::1"]

/** Hosts this server answers for: the base URL's host and, in development, loopback names. */
export const allowedHosts = (config: ServerConfig): ReadonlySet<string> =>
  new Set([
    new URL(config.baseUrl).hostname,
    ...Option.toArray(Option.map(config.artifactOrigin, (origin) => new URL(origin).hostname)),
    ...(config.env === "development" ? LOOPBACK : [])
  ])

/**
 * With DOCK_ARTIFACT_ORIGIN on a host of its own, that host serves artifacts and nothing else: untrusted pages
 * then never share an origin (cookies, storage) with the app or the API.
 */
const artifactOnlyHost = (config: ServerConfig): string | undefined => {
  const artifactHost = Option.getOrUndefined(Option.map(config.artifactOrigin, (origin) => new URL(origin).hostname))
  return artifactHost === undefined || artifactHost === new URL(config.baseUrl).hostname ? undefined : artifactHost
}

/**
 * A Host header is exactly one RFC 3986 authority without userinfo: a registered name or IPv4 address, or an IP
 * literal in brackets, with an optional port. "a:1, evil.com", "a:1:2" or "user@a" is no host at all.
 */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i

/** "example.com:8787" → "example.com"; "[::1]:80" → "[::1]"; undefined for anything but one host[:port]. */
const hostnameOf = (host: string): string | undefined => {
  const match = HOST.exec(host.trim())
  if (match === null || (match[2] !== undefined && Number(match[2]) > 65535)) return undefined
  return match[1]!.toLowerCase()
}

/** What a request's Host header and path are refused with, if anything: 403 for a foreign host, 404 off-artifact. */
export const hostGuard = (config: ServerConfig) => {
  const hosts = allowedHosts(config)
  const artifactHost = artifactOnlyHost(config)
  return (request: HttpServerRequest.HttpServerRequest): DockError | undefined => {
    const host = request.headers["host"]
    const hostname = host === undefined ? undefined : hostnameOf(host)
    if (hostname === undefined || !hosts.has(hostname)) {
      return new Forbidden({ message: `This server does not answer for the host ${host ?? "(none)"}` })
    }
    if (hostname === artifactHost && !isArtifactPath(request.url)) {
      return new NotFound({
        message: `No route for ${request.method} ${request.url.split("?")[0]} on the artifact origin`
      })
    }
    return undefined
  }
}
