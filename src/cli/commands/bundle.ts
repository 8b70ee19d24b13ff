import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { makeBundle } from '../../bundle/bundle.js'
import { verifyBundle } from '../../bundle/manifest.js'
import { progressPrinter } from '../../distribution/progress.js'
import { stagedDir } from '../../distribution/resolve.js'
import { VisError } from '../../util/errors.js'
import type { Command } from '../command.js'

const usage = `Usage: vis bundle --python 3.11[,3.12...] --out DIR [--archives DIR] [--tarball FILE] [--platform P]
       vis bundle --verify DIR

Make an offline install kit for this platform in DIR (a new or empty directory):
the package tarball with its prebuilt native parts, an npm cache holding every
dependency, the CPython archives and manifests (a file:// release location),
README.txt with the install commands, and bundle.json with every file's sha256.
Installing from it needs no network and no compiler.

  --python     the minors to include (staged first with \`vis runtime stage\`)
  --archives   where the staged archives are (default: cpython-dist/archives)
  --tarball    a tarball already made by \`npm pack\` (default: npm pack of this package,
               which must have its prebuilds: \`npm run prebuildify\`)
  --platform   the platform the kit is for (linux-x86_64-gnu, linux-aarch64-gnu; default this
               one's): its prebuilds, its staged archives (\`vis runtime stage --platform\`)
               and better-sqlite3 cross-built by scripts/cross-native-deps.mjs
  --verify     check every file of a bundle against its bundle.json`

export const bundle: Command = {
  name: 'bundle',
  usage,
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        python: { type: 'string' },
        out: { type: 'string' },
        archives: { type: 'string' },
        tarball: { type: 'string' },
        verify: { type: 'string' },
        platform: { type: 'string' },
      },
    })
    if (values.verify) {
      const r = await verifyBundle(values.verify)
      for (const p of r.problems) console.log(`BAD  ${p}`)
      const note = r.tolerated.length ? `, ${r.tolerated.length} written by npm (allowed)` : ''
      console.log(
        r.problems.length
          ? `${r.problems.length} problems, ${r.ok} files intact${note}`
          : `all ${r.ok} files intact${note}`,
      )
      return r.problems.length ? 1 : 0
    }
    if (!values.python || !values.out) {
      throw new VisError('bundle.usage', 'give --python 3.X[,3.Y] and --out DIR (see `vis help bundle`)', {})
    }
    const manifest = await makeBundle({
      minors: values.python.split(',').map((m) => m.trim()),
      out: values.out,
      archives: values.archives ?? join(stagedDir(), 'archives'),
      tarball: values.tarball,
      platform: values.platform,
      onProgress: progressPrinter(),
    })
    const bytes = manifest.files.reduce((n, f) => n + f.size, 0)
    console.log(
      `Bundle: ${values.out} (${manifest.files.length} files, ${(bytes / 1048576).toFixed(1)} MB); install with README.txt`,
    )
    return 0
  },
}
