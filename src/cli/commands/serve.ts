import { parseArgs } from 'node:util'
import { DEFAULT_HOST, DEFAULT_PORT, startServer } from '../../http/server.js'
import { loadMcpConfig } from '../../mcp/config.js'
import { VisError } from '../../util/errors.js'
import type { Command } from '../command.js'

const usage = `Usage: vis serve [--host ${DEFAULT_HOST}] [--port ${DEFAULT_PORT}] [--pool N] [--python 3.X] [--project DIR]

Serve the HTTP API: sessions, blocks, live events (SSE), attachments, doctor, metrics.
State lives in SQLite under the vis home (VIS_HOME or ~/.vis); sessions survive a restart.

  --host     address to bind (default ${DEFAULT_HOST}). Any non-loopback address needs
             VIS_TOKEN set to a bearer token of at least 16 characters, or vis refuses to start.
  --port     port (default ${DEFAULT_PORT}; 0 picks a free one)
  --pool     warm workers kept per policy (default 1)
  --python   the Python minor to run, e.g. 3.12 (default: the resolved one)
  --project  the project (default: the current directory): its .vis/extensions load beside
             ~/.vis/extensions, and its declared import roots (pyproject.toml, setup.cfg...)
             start the sys.path of sessions whose roots contain them

The OpenAPI document is served at /v1/openapi.json. SIGINT or SIGTERM stops cleanly.`

export const serve: Command = {
  name: 'serve',
  summary: 'Serve the HTTP API (loopback by default)',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        host: { type: 'string', default: DEFAULT_HOST },
        port: { type: 'string', default: String(DEFAULT_PORT) },
        pool: { type: 'string' },
        python: { type: 'string' },
        project: { type: 'string' },
      },
    })
    const port = Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new VisError('cli.bad-option', `--port must be 0..65535, not ${values.port}`)
    }
    const pool = values.pool === undefined ? undefined : Number(values.pool)
    if (pool !== undefined && (!Number.isInteger(pool) || pool < 0 || pool > 64)) {
      throw new VisError('cli.bad-option', `--pool must be 0..64, not ${values.pool}`)
    }
    const server = await startServer({
      host: values.host,
      port,
      python: values.python,
      mcp: loadMcpConfig().serve,
      project: values.project ?? process.cwd(),
      pool: pool === undefined ? undefined : { size: pool },
    })
    const auth = process.env.VIS_TOKEN ? ' -H "Authorization: Bearer $VIS_TOKEN"' : ''
    process.stdout.write(
      `vis serving ${server.url} (home ${server.engine.home})\n` +
        `try: curl -s${auth} -X POST ${server.url}/v1/sessions -H 'content-type: application/json' -d '{}'\n`,
    )
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        process.off('SIGINT', onInt)
        process.off('SIGTERM', onTerm)
        process.stderr.write(`vis serve: ${signal}, stopping\n`)
        server.close().then(resolve, (err) => {
          process.stderr.write(`vis serve: ${(err as Error).message}\n`)
          resolve()
        })
      }
      const onInt = () => stop('SIGINT')
      const onTerm = () => stop('SIGTERM')
      process.on('SIGINT', onInt)
      process.on('SIGTERM', onTerm)
    })
    return 0
  },
}
