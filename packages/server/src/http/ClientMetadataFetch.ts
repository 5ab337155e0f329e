/**
 * Fetching a Client ID Metadata Document (issue 17, docs/oauth.md "SSRF"): the `client_id` is an https URL the
 * client chose, so fetching it must not become a way into this server's network. Every hop is checked: the
 * name is resolved, every address it resolves to must be public (no private, loopback, link-local, unique-local,
 * CGNAT, multicast, reserved or unspecified address), and the connection goes to the address that was checked
 * (no second lookup an attacker's DNS could answer differently). At most 3 redirects, each checked the same way;
 * 64 KiB; one deadline for the whole fetch, name resolution included. Loopback over http is allowed only with
 * DOCK_OAUTH_ALLOW_LOOPBACK_CLIENT_METADATA (tests), which production refuses. Whatever the other server answers
 * (a malformed Location, a broken stream) rejects the fetch: nothing here may throw outside a promise.
 */
import { type ClientMetadataDocument, OAuthError } from "@dock/domain"
import { Duration, Effect } from "effect"
import * as Dns from "node:dns"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"

export const CLIENT_METADATA_MAX_BYTES = 64 * 1024
export const CLIENT_METADATA_MAX_REDIRECTS = 3

const refused = (description: string) => new OAuthError({ error: "invalid_client", error_description: description })

const blocked = new Net.BlockList()
for (
  const [network, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.88.99.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) blocked.addSubnet(network, prefix, "ipv4")
for (
  const [network, prefix] of [
    // The unspecified and loopback addresses, and the deprecated IPv4-compatible ones (`::a.b.c.d`).
    ["::", 96],
    ["64:ff9b::", 96],
    ["64:ff9b:1::", 48],
    ["100::", 64],
    ["2001::", 23],
    ["2001:db8::", 32],
    ["2002::", 16],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8]
  ] as const
) blocked.addSubnet(network, prefix, "ipv6")

const isLoopback = (address: string) => Net.isIPv4(address) ? address.startsWith("127.") : address === "::1"

/** Whether this server may connect to `address` for a metadata document. */
export const isPublicAddress = (address: string, allowLoopback = false): boolean => {
  // An IPv4-mapped IPv6 address is the IPv4 address it maps.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped !== null) return isPublicAddress(mapped[1]!, allowLoopback)
  if (allowLoopback && isLoopback(address)) return true
  const family = Net.isIPv4(address) ? "ipv4" : Net.isIPv6(address) ? "ipv6" : undefined
  if (family === undefined) return false
  return !blocked.check(address, family)
}

interface Address {
  readonly address: string
  readonly family: 4 | 6
}

interface Hop {
  readonly url: URL
  /** Every address the name resolved to, each checked; the connection may go to these and no other. */
  readonly addresses: ReadonlyArray<Address>
}

/**
 * The name's addresses, within the deadline: getaddrinfo cannot be cancelled (it finishes in libuv's pool), so the
 * fetch stops waiting for it instead.
 */
const resolved = (host: string, signal: AbortSignal) =>
  new Promise<Array<{ address: string; family: number }>>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => reject(signal.reason)
    signal.addEventListener("abort", onAbort, { once: true })
    Dns.promises.lookup(host, { all: true, verbatim: true }).then(
      resolve,
      () => reject(refused(`The client_id host ${host} does not resolve`))
    ).finally(() => signal.removeEventListener("abort", onAbort))
  })

/** The URL's checked addresses: its scheme and shape, its name resolved, every address public. */
const checkedHop = async (raw: string, allowLoopback: boolean, signal: AbortSignal): Promise<Hop> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw refused("The client_id is not a URL")
  }
  if (url.username !== "" || url.password !== "" || url.hash !== "") {
    throw refused("The client_id URL may carry no user info and no fragment")
  }
  const host = url.hostname.replace(/^\[|\]$/g, "")
  const secure = url.protocol === "https:"
  const loopbackHttp = url.protocol === "http:" && allowLoopback
  if (!secure && !loopbackHttp) throw refused("The client_id must be an https URL")
  const addresses = Net.isIP(host) !== 0
    ? [{ address: host, family: Net.isIPv4(host) ? 4 : 6 }]
    : await resolved(host, signal)
  if (addresses.length === 0) throw refused(`The client_id host ${host} does not resolve`)
  for (const { address } of addresses) {
    if (!isPublicAddress(address, allowLoopback)) {
      throw refused(`The client_id host ${host} resolves to an address this server does not fetch from`)
    }
    if (!secure && !isLoopback(address.replace(/^::ffff:/i, ""))) throw refused("The client_id must be an https URL")
  }
  return {
    url,
    addresses: addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }) as const)
  }
}

type Answer =
  | { readonly _tag: "Redirect"; readonly location: string }
  | { readonly _tag: "Body"; readonly status: number; readonly text: string }

/** One request to the checked address (the name only for TLS and Host), bounded in size; the signal ends it. */
const requestHop = (hop: Hop, signal: AbortSignal) =>
  new Promise<Answer>((resolve, reject) => {
    const options: Https.RequestOptions = {
      method: "GET",
      headers: { accept: "application/json", "user-agent": "Dock OAuth client metadata fetcher" },
      signal,
      // Connect only to the addresses that were checked. Node 20+ (autoSelectFamily) asks with `all: true` and
      // wants the list; other callers want one address.
      lookup: (_hostname, lookupOptions, callback) => {
        if (lookupOptions.all === true) callback(null, [...hop.addresses])
        else callback(null, hop.addresses[0]!.address, hop.addresses[0]!.family)
      },
      agent: false
    }
    const request = (hop.url.protocol === "https:" ? Https : Http).request(hop.url, options, (response) => {
      const status = response.statusCode ?? 0
      if ([301, 302, 303, 307, 308].includes(status)) {
        response.resume()
        const location = response.headers.location
        if (location === undefined) return reject(refused("The client_id URL redirects nowhere"))
        // Parsed here, in the response callback, where a throw would escape the promise and end the process.
        try {
          return resolve({ _tag: "Redirect", location: new URL(location, hop.url).toString() })
        } catch {
          return reject(refused("The client_id URL redirects to something that is not a URL"))
        }
      }
      const declared = Number(response.headers["content-length"] ?? 0)
      if (declared > CLIENT_METADATA_MAX_BYTES) {
        response.destroy()
        return reject(refused(`The client metadata document is larger than ${CLIENT_METADATA_MAX_BYTES} bytes`))
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > CLIENT_METADATA_MAX_BYTES) {
          response.destroy()
          reject(refused(`The client metadata document is larger than ${CLIENT_METADATA_MAX_BYTES} bytes`))
        } else chunks.push(chunk)
      })
      response.on("end", () => resolve({ _tag: "Body", status, text: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end()
  })

const fetchDocument = async (clientId: string, allowLoopback: boolean, signal: AbortSignal) => {
  let target = clientId
  for (let redirects = 0;; redirects++) {
    const hop = await checkedHop(target, allowLoopback, signal)
    const answer = await requestHop(hop, signal)
    if (answer._tag === "Body") {
      if (answer.status !== 200) throw refused(`The client metadata document answered HTTP ${answer.status}`)
      return answer.text
    }
    if (redirects >= CLIENT_METADATA_MAX_REDIRECTS) {
      throw refused(`The client_id URL redirects more than ${CLIENT_METADATA_MAX_REDIRECTS} times`)
    }
    target = answer.location
  }
}

const strings = (value: unknown) =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value as Array<string> : undefined

/** The ClientMetadataFetcher the server provides to the OAuth service. */
export const clientMetadataFetcher = (options: {
  readonly allowLoopback: boolean
  readonly timeout: Duration.Duration
}) =>
(clientId: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(options.timeout))])
      const text = await fetchDocument(clientId, options.allowLoopback, deadline).catch((error: unknown) => {
        if (error instanceof OAuthError) throw error
        if (deadline.aborted) {
          throw refused(`The client metadata document did not arrive within ${Duration.format(options.timeout)}`)
        }
        throw refused("The client metadata document could not be fetched")
      })
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        throw refused("The client metadata document is not JSON")
      }
      if (typeof parsed !== "object" || parsed === null) throw refused("The client metadata document is not an object")
      const record = parsed as Record<string, unknown>
      const redirectUris = strings(record["redirect_uris"])
      if (typeof record["client_id"] !== "string" || redirectUris === undefined) {
        throw refused("The client metadata document needs client_id and redirect_uris")
      }
      const document: ClientMetadataDocument = {
        client_id: record["client_id"],
        client_name: typeof record["client_name"] === "string" ? record["client_name"] : undefined,
        client_uri: typeof record["client_uri"] === "string" ? record["client_uri"] : undefined,
        redirect_uris: redirectUris
      }
      return document
    },
    catch: (error) => error instanceof OAuthError ? error : refused("The client metadata document could not be fetched")
  })
