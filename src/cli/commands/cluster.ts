import { parseArgs } from 'node:util'
import { nginxConfig } from '../../cluster/nginx-config.js'
import { VisError } from '../../util/errors.js'
import { type Command, subcommands } from '../command.js'

const usage = `Usage: vis cluster nginx-config --listen ADDR:PORT --node HOST:PORT [--node HOST:PORT]...
                                 [--server-name NAME] [--fail-timeout SECONDS]

Several \`vis serve\` nodes sharing one PostgreSQL store (VIS_DATABASE_URL), behind nginx
(docs/cluster.md).

  nginx-config   print the map, upstream and server blocks for nginx's http { } context: every
                 request of a session goes to one node (consistent hashing on the session id),
                 other requests spread; SSE and WebSocket pass unbuffered; a dead node's
                 sessions move to the next node of the ring.

  --listen        where nginx listens, e.g. 0.0.0.0:80 or 127.0.0.1:8080
  --node          a vis node, host:port as nginx reaches it; repeat for each node
  --server-name   the name clients use (nginx's server_name; default _ for any). Start the
                  nodes with --allow-host NAME: nginx passes the client's Host on.
  --fail-timeout  seconds nginx leaves a node out after it failed (default 5)

Example:
  vis cluster nginx-config --listen 0.0.0.0:80 --server-name vis.internal \\
      --node 10.0.0.11:7878 --node 10.0.0.12:7878 --node 10.0.0.13:7878 > /etc/nginx/conf.d/vis.conf`

function nginxConfigCommand(argv: string[]): number {
  let values: { listen?: string; node: string[]; 'server-name'?: string; 'fail-timeout'?: string }
  try {
    values = parseArgs({
      args: argv,
      options: {
        listen: { type: 'string' },
        node: { type: 'string', multiple: true, default: [] },
        'server-name': { type: 'string' },
        'fail-timeout': { type: 'string' },
      },
    }).values
  } catch (err) {
    throw new VisError('cli.bad-option', (err as Error).message)
  }
  if (values.listen === undefined) throw new VisError('cli.bad-option', '--listen ADDR:PORT is required')
  const failTimeout = values['fail-timeout']
  const text = nginxConfig({
    listen: values.listen,
    nodes: values.node,
    serverName: values['server-name'],
    failTimeoutS: failTimeout === undefined ? undefined : Number(failTimeout),
  })
  process.stdout.write(text)
  return 0
}

export const cluster: Command = {
  name: 'cluster',
  usage,
  run: subcommands('cluster', usage, { 'nginx-config': nginxConfigCommand }),
}
