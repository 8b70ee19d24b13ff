// The npm side of a bundle: the package tarball (with its prebuilds) and an npm cache
// holding every dependency, so `npm install --offline --cache DIR` needs no registry.
import { execFile } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve as resolvePath } from 'node:path'
import { VisError } from '../util/errors.js'
import { hostProgramPath, nodeBinDir, trustedSearchPath } from '../util/host-programs.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import { npmConfigEnv, npmGlobalConfig } from '../util/tool-home.js'
import { writablePlaces } from '../util/writable-roots.js'

// The environment every program of a bundle's npm step runs with: PATH of the system directories
// and the running node's, npm's configuration as npmConfigEnv leaves it. `done` removes the private
// HOME made for it, if one was.
function npmEnv(): { env: NodeJS.ProcessEnv; path: string; done: () => void } {
  // npm's user and global configuration (`script-shell=`, `node-options=`) choose what it runs, the
  // package's prepack script included: where a sandbox could write them (a session rooted at the
  // person's HOME), npm gets a private HOME and empty configs instead (util/tool-home.ts).
  const path = [nodeBinDir(), ...trustedSearchPath()].join(':')
  let home: string | undefined
  const config = npmConfigEnv(writablePlaces(), () => {
    home ??= makeHostStateDir('vis-npm-home-')
    return home
  })
  // A command-line `--prefix` (npm() below) moves npm's default global config to
  // `<cwd>/etc/npmrc`, so the global config npm would read without it is named explicitly.
  const globalconfig =
    config.npm_config_globalconfig ??
    resolvePath(
      process.env.npm_config_globalconfig ?? process.env.NPM_CONFIG_GLOBALCONFIG ?? npmGlobalConfig(),
    )
  Object.assign(config, { npm_config_globalconfig: globalconfig })
  const replaced = new Set(Object.keys(config).map((k) => k.toLowerCase()))
  const env: NodeJS.ProcessEnv = { PATH: path }
  for (const [k, v] of Object.entries(process.env)) {
    // Each variable npm reads is set once: an upper-case twin of a replaced one is left out.
    if (k !== 'PATH' && !replaced.has(k.toLowerCase())) env[k] = v
  }
  Object.assign(env, config)
  return {
    env,
    path,
    done: () => {
      if (home !== undefined) rmSync(home, { recursive: true, force: true })
    },
  }
}

function npm(args: string[], cwd: string, what: string): Promise<string> {
  // npm from the system directories or beside the running node, never the caller's PATH (a
  // project's node_modules/.bin leads it under npx); its `#!/usr/bin/env node` finds the same node.
  const file = hostProgramPath('npm', [nodeBinDir()])
  return new Promise((resolve, reject) => {
    const { env, path, done } = npmEnv()
    if (!file) {
      done()
      reject(
        new VisError('bundle.npm', `${what}: npm is not installed in ${path}`, {
          path: cwd,
          command: `npm ${args.join(' ')}`,
        }),
      )
      return
    }
    // npm's project config is `<local prefix>/.npmrc`, and without `--prefix` npm finds its local
    // prefix by walking up from cwd: a parent whose package.json lists cwd in `workspaces` becomes
    // the project, and its .npmrc (`script-shell=`) applies. A checkout at R/tools/vis-runtime with a
    // session on R let a block write R/package.json and R/.npmrc, and the prepack script ran through
    // the block's shell (fourteenth outsider pass). `--prefix cwd` on the command line stops the walk
    // (npm takes a command-line prefix as the local prefix as it is): the only project config is the
    // package's own, which is read-only in every jail (or the private folder vis made).
    execFile(
      file,
      [...args, '--prefix', cwd],
      { cwd, env, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        done()
        if (!err) return resolve(stdout)
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT'
        reject(
          new VisError(
            'bundle.npm',
            missing
              ? `${what}: npm is not installed in ${path}`
              : `${what}: npm ${args[0]} failed: ${stderr.trim() || err.message}`,
            { path: cwd, command: `npm ${args.join(' ')}` },
          ),
        )
      },
    )
  })
}

// One of the package's own lifecycle scripts (prepack, prepare, postpack), run as npm's run-script
// runs it (`sh -c SCRIPT` in the package, npm_lifecycle_* and npm_package_json set) but with PATH as
// npmEnv gives it. npm's run-script puts `node_modules/.bin` of the package and of EVERY folder
// above it ahead of PATH, so a checkout at R/tools/vis-runtime with a session on R ran the
// block's R/node_modules/.bin/node as the `node` of `node scripts/prepack.mjs`, on the host
// (eighteenth outsider pass): `npm pack` runs with --ignore-scripts and the scripts run here, where
// no folder a sandbox may write comes before the system's and the running node's.
function lifecycle(root: string, event: string, script: string | undefined): Promise<void> {
  if (script === undefined) return Promise.resolve()
  const shell = hostProgramPath('sh')
  return new Promise((resolve, reject) => {
    const { env, path, done } = npmEnv()
    const command = `${event}: ${script}`
    if (!shell) {
      done()
      reject(
        new VisError('bundle.npm', `packing ${root}: sh is not installed in ${path}`, {
          path: root,
          command,
        }),
      )
      return
    }
    Object.assign(env, {
      npm_lifecycle_event: event,
      npm_lifecycle_script: script,
      npm_package_json: join(root, 'package.json'),
      npm_node_execpath: process.execPath,
    })
    execFile(
      shell,
      ['-c', script],
      { cwd: root, env, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        done()
        if (!err) return resolve()
        reject(
          new VisError(
            'bundle.npm',
            `packing ${root}: the package's ${event} script (${script}) failed: ${
              `${stdout.trim()}\n${stderr.trim()}`.trim() || err.message
            }`,
            { path: root, command },
          ),
        )
      },
    )
  })
}

// The package's lifecycle scripts `npm pack` would run, from its package.json (read-only in every
// jail, as npm itself reads it).
function packScripts(root: string): Record<string, string | undefined> {
  let scripts: unknown
  try {
    scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: unknown }).scripts
  } catch (err) {
    throw new VisError(
      'bundle.npm',
      `packing ${root}: its package.json is not readable JSON: ${String(err)}`,
      {
        path: root,
      },
    )
  }
  const pick = (k: string): string | undefined => {
    const v = (scripts as Record<string, unknown> | undefined)?.[k]
    return typeof v === 'string' && v.trim() !== '' ? v : undefined
  }
  return { prepack: pick('prepack'), prepare: pick('prepare'), postpack: pick('postpack') }
}

// `npm pack` of the package at root into dir; returns the tarball's file name.
// npm's own order: prepack, then prepare (pacote, making the tarball), the pack, then postpack.
export async function packPackage(root: string, dir: string): Promise<string> {
  const scripts = packScripts(root)
  await lifecycle(root, 'prepack', scripts.prepack)
  await lifecycle(root, 'prepare', scripts.prepare)
  const out = await npm(
    ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
    root,
    `packing ${root}`,
  )
  const json = out.slice(out.indexOf('['))
  const [entry] = JSON.parse(json) as { filename: string }[]
  if (!entry) throw new VisError('bundle.npm', `npm pack in ${root} named no tarball`, { path: root })
  await lifecycle(root, 'postpack', scripts.postpack)
  return entry.filename
}

// Installs the tarball into a throwaway project with cacheDir as npm's cache and no install
// scripts (nothing compiles, nothing runs): what remains in the cache is every dependency's
// metadata and tarball, which is what an offline install reads.
// `inspect` sees the installed throwaway project before it is removed.
export async function fillCache(
  tarball: string,
  cacheDir: string,
  inspect?: (project: string) => Promise<void>,
): Promise<void> {
  const project = makeHostStateDir('vis-bundle-deps-')
  try {
    writeFileSync(
      join(project, 'package.json'),
      '{"name":"vis-bundle-deps","version":"0.0.0","private":true}\n',
    )
    await npm(
      ['install', tarball, '--cache', cacheDir, '--ignore-scripts', '--no-audit', '--no-fund'],
      project,
      'collecting the npm dependencies',
    )
    await inspect?.(project)
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
}
