// The npm side of a bundle: the package tarball (with its prebuilds) and an npm cache
// holding every dependency, so `npm install --offline --cache DIR` needs no registry.
import { execFile } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join, resolve as resolvePath } from 'node:path'
import { VisError } from '../util/errors.js'
import { hostProgramPath, nodeBinDir, trustedSearchPath } from '../util/host-programs.js'
import { makeHostStateDir } from '../util/host-state-dirs.js'
import { npmConfigEnv, npmGlobalConfig } from '../util/tool-home.js'
import { writablePlaces } from '../util/writable-roots.js'

function npm(args: string[], cwd: string, what: string): Promise<string> {
  // npm's user and global configuration (`script-shell=`, `node-options=`) choose what it runs, the
  // package's prepack script included: where a sandbox could write them (a session rooted at the
  // person's HOME), npm gets a private HOME and empty configs instead (util/tool-home.ts).
  // npm from the system directories or beside the running node, never the caller's PATH (a
  // project's node_modules/.bin leads it under npx); its `#!/usr/bin/env node` finds the same node.
  const file = hostProgramPath('npm', [nodeBinDir()])
  const path = [nodeBinDir(), ...trustedSearchPath()].join(':')
  return new Promise((resolve, reject) => {
    if (!file) {
      reject(
        new VisError('bundle.npm', `${what}: npm is not installed in ${path}`, {
          path: cwd,
          command: `npm ${args.join(' ')}`,
        }),
      )
      return
    }
    let home: string | undefined
    const config = npmConfigEnv(writablePlaces(), () => {
      home ??= makeHostStateDir('vis-npm-home-')
      return home
    })
    // npm's project config is `<local prefix>/.npmrc`, and without `--prefix` npm finds its local
    // prefix by walking up from cwd: a parent whose package.json lists cwd in `workspaces` becomes
    // the project, and its .npmrc (`script-shell=`) applies. A checkout at R/tools/vis-runtime with a
    // session on R let a block write R/package.json and R/.npmrc, and the prepack script ran through
    // the block's shell (fourteenth outsider pass). `--prefix cwd` on the command line stops the walk
    // (npm takes a command-line prefix as the local prefix as it is): the only project config is the
    // package's own, which is read-only in every jail (or the private folder vis made). A command-line
    // prefix also moves npm's default global config to `<cwd>/etc/npmrc`, so the global config npm
    // would read without it is named explicitly.
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
    execFile(
      file,
      [...args, '--prefix', cwd],
      { cwd, env, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (home !== undefined) rmSync(home, { recursive: true, force: true })
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

// `npm pack` of the package at root into dir; returns the tarball's file name.
export async function packPackage(root: string, dir: string): Promise<string> {
  const out = await npm(['pack', '--json', '--pack-destination', dir], root, `packing ${root}`)
  const json = out.slice(out.indexOf('['))
  const [entry] = JSON.parse(json) as { filename: string }[]
  if (!entry) throw new VisError('bundle.npm', `npm pack in ${root} named no tarball`, { path: root })
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
