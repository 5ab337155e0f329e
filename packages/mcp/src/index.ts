/**
 * @dock/mcp — the MCP adapter: the tool catalogue (one entry per spec tool), the Effect-Schema → JSON-Schema
 * adapter, the dispatcher and the Streamable HTTP handler factory. The package exists from the foundation on so
 * that the dependency arrows (domain ← mcp ← server) are in place; its contents arrive with the MCP issue.
 */
export {}
