import { constants as C } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { readCapped } from '../../confinement/beneath.js'
import { readTextBeneath } from '../../confinement/read-text.js'
import { Pacer } from '../../util/pacer.js'
import { compileIgnoreRules, type IgnoreRule, ruleVerdict } from './ignore-rules.js'
import { at, isWithin, O_PATH, type PathGuard } from './paths.js'

// An ignore file inside the roots is the sandbox's to write (and grow while it is read): only
// its first MiB of rules is read.
const MAX_IGNORE_BYTES = 1 << 20
const ignoreText = async (fh: FileHandle) => (await readCapped(fh.fd, MAX_IGNORE_BYTES)).data.toString('utf8')

interface Frame {
  base: string
  rules: readonly IgnoreRule[]
}

// The .gitignore rules in force at one directory, git's way: rules apply
// relative to the directory of their file, deeper files win over shallower
// ones, and they only count inside a repository (like ripgrep's default).
// The rules are the sandbox's, matched on the host's event loop: ignore-rules.ts matches them
// without backtracking, and every walk paces that work (one Pacer per stack and its descendants).
export class IgnoreStack {
  private constructor(
    private readonly frames: readonly Frame[],
    // False outside a repository, where no .gitignore counts at any depth.
    private readonly active: boolean,
    private readonly pace: Pacer,
    // The walked directory itself is ignored (a rule names it or one above it), so all is.
    private readonly all = false,
  ) {}

  static none(): IgnoreStack {
    return new IgnoreStack([], false, new Pacer())
  }

  // Rules for a directory: .git/info/exclude and every .gitignore from the
  // repository root down to dir, not looking above `limit` (the root it is in).
  static async at(
    dir: string,
    limit: string,
    io: IgnoreReader = hostFiles,
  ): Promise<IgnoreStack | undefined> {
    const chain: string[] = []
    let d = dir
    let repo: string | undefined
    for (;;) {
      chain.unshift(d)
      if (await io.exists(join(d, '.git'))) {
        repo = d
        break
      }
      const up = dirname(d)
      if (up === d || !isWithin(up, limit)) break
      d = up
    }
    if (!repo) return undefined
    const pace = new Pacer()
    let stack = new IgnoreStack([], true, pace)
    const exclude = await io.read(repo, '.git/info/exclude')
    if (exclude) stack = stack.with(repo, await compileIgnoreRules(exclude, pace))
    for (const c of chain) {
      // A directory below the repository's top that its parents' rules ignore hides all under it
      // (git cannot re-include a file whose directory is excluded).
      if (c !== repo && (await stack.ignored(c, true))) return new IgnoreStack([], true, pace, true)
      const text = await io.read(c, '.gitignore')
      if (text) stack = stack.with(c, await compileIgnoreRules(text, pace))
    }
    return stack
  }

  private with(base: string, rules: IgnoreRule[]): IgnoreStack {
    return rules.length ? new IgnoreStack([...this.frames, { base, rules }], true, this.pace) : this
  }

  // The rules for a subdirectory whose own .gitignore is read through its handle.
  async descend(dirAbs: string, dir: FileHandle): Promise<IgnoreStack> {
    if (!this.active || this.all) return this
    const text = await readGitignore(dir)
    return text ? this.with(dirAbs, await compileIgnoreRules(text, this.pace)) : this
  }

  async ignored(abs: string, isDir: boolean): Promise<boolean> {
    if (this.all) return true
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i]!
      const rel = relative(f.base, abs).split(sep).join('/')
      if (!rel || rel.startsWith('..')) continue
      const verdict = await ruleVerdict(f.rules, rel, isDir, this.pace)
      if (verdict !== undefined) return verdict
    }
    return false
  }
}

// How the ignore files above a walked directory are read: `rel` (no `..`) under the directory
// `dir` ('' when there is none to read).
export type IgnoreReader = {
  read(dir: string, rel: string): Promise<string>
  exists(abs: string): Promise<boolean>
}

// Directories above the roots: no sandbox writes them through this session, but one may be
// another session's root (SECURITY.md "Roots"), which can plant its .gitignore as a FIFO (a
// host thread blocked in open() for good), a link to /dev/zero (gigabytes read) or to a host
// file (its lines made rules). So they are read as the agent reads ancestors' AGENTS.md
// (confinement/read-text.ts): beneath the directory with no link at all, O_NONBLOCK, a regular file only,
// at most MAX_IGNORE_BYTES (a larger one counts as absent). `.git` is only looked at (stat, as
// ripgrep's side does), never read.
const hostFiles: IgnoreReader = {
  read: async (dir, rel) => {
    const r = await readTextBeneath(dir, rel, true, MAX_IGNORE_BYTES).catch(() => undefined)
    return r?.kind === 'text' ? r.text : ''
  },
  exists: (abs) =>
    stat(abs).then(
      () => true,
      () => false,
    ),
}

// Inside the roots the sandbox writes these files and can swap in links: they are read
// through the guard (opened once, checked by what was opened; in a draft, the draft's own),
// and one that leads out of the roots counts as absent. Above the roots, by name.
export function ignoreReader(guard: PathGuard): IgnoreReader {
  const inside = async (abs: string) =>
    [...guard.roots, ...(await guard.realRoots())].some((r) => isWithin(abs, r))
  return {
    async read(dir, rel) {
      const abs = join(dir, rel)
      if (!(await inside(abs))) return hostFiles.read(dir, rel)
      const opened = await guard.open(abs, 'gitignore', C.O_RDONLY | C.O_NOFOLLOW).catch(() => undefined)
      if (!opened) return ''
      try {
        return (await opened.fh.stat()).isFile() ? await ignoreText(opened.fh) : ''
      } catch {
        return ''
      } finally {
        await opened.fh.close()
      }
    },
    async exists(abs) {
      if (!(await inside(abs))) return hostFiles.exists(abs)
      const opened = await guard.open(abs, 'gitignore', O_PATH).catch(() => undefined)
      await opened?.fh.close()
      return opened !== undefined
    },
  }
}

async function readGitignore(dir: FileHandle): Promise<string> {
  let fh: FileHandle | undefined
  try {
    fh = await open(at(dir, '.gitignore'), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK)
    if (!(await fh.stat()).isFile()) return ''
    return await ignoreText(fh)
  } catch {
    return ''
  } finally {
    await fh?.close()
  }
}
