import { pathToFileURL } from 'node:url'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

type Opts = { roots?: () => string[] }

export const clientOptions = (opts: Opts) =>
  opts.roots ? { capabilities: { roots: { listChanged: true } } } : {}

// A client that answers roots/list with the directories opts.roots() names at the time.
export function withRoots(client: Client, opts: Opts): Client {
  const roots = opts.roots
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots().map((p) => ({ uri: pathToFileURL(p).href, name: p })),
    }))
  }
  return client
}
