import { type Dirent, readlinkSync } from 'node:fs'
import { lstat, readdir, readlink, realpath } from 'node:fs/promises'
import { basename, dirname, join, relative } from 'node:path'
import { closeFd, readCapped, Tree } from '../confinement/beneath.js'
import { holdsVisHome } from '../confinement/mount-pins.js'
import { rootIdentity } from '../confinement/root-guard.js'
import { errorMessage } from '../util/errors.js'
import { within } from '../util/path-within.js'
import { field, listField, parseFrontmatter } from './frontmatter.js'
import { agentPlaces, firstNameWins, NAME, type Place, type PlaceInput, skillPlaces } from './places.js'

// Reads the skills and agent definitions the places name. Below a session root nothing is
// followed through a symlink (the sandbox writes there and could point a SKILL.md at a host
// file); a person's own folder may be a symlink (dotfiles), but where it leads into a root it
// is read like the root's own files.

// Where a session sees a skill folder that lies outside its roots (mounted read-only there).
export const SKILLS_MOUNT = '/vis/skills'

const MAX_FILE_BYTES = 256 * 1024
const MAX_RESOURCES = 200
const MAX_DEPTH = 4

export type Skill = {
  name: string
  description: string
  // SKILL.md on the host.
  path: string
  // The folder as the session sees it: its path in a root, or under SKILLS_MOUNT.
  sessionDir: string
  // Outside every root: the folder's real path, which the jail mounts at sessionDir, and its
  // identity (device:inode) when found: every later use checks the folder is still this one
  // (confinement/mount-pins.ts), so a folder swapped for a link is refused, never followed.
  mountSource?: string
  mountPin?: string
  // Files beside SKILL.md, relative to the folder (regular files only, bounded).
  resources: string[]
  // SKILL.md as read at discovery (what `skill(name)` returns).
  text: string
}

export type AgentDefinition = {
  name: string
  description: string
  model?: string
  tools?: string[]
  // The markdown body: the child's system prompt.
  prompt: string
  path: string
}

export type Problem = { kind: 'skill' | 'agent'; path: string; reason: string }
export type Shadowed = { kind: 'skill' | 'agent'; name: string; path: string; by: string }

export type Found = { skills: Skill[]; agents: AgentDefinition[]; problems: Problem[]; shadowed: Shadowed[] }

// A folder opened for reading: a Tree and the path below it, and how the session names it.
type Located = { tree: Tree; rel: string; sessionPath?: string }

type RootReal = { root: string; real: string }

async function realRoots(roots: readonly string[]): Promise<RootReal[]> {
  const out: RootReal[] = []
  for (const root of roots) out.push({ root, real: await realpath(root).catch(() => root) })
  return out
}

// A path from a person's own folder, resolved: inside a root it is read through that root.
// Follows a person's path one component at a time. Links outside the roots are theirs and are
// followed; once the walk reaches a root, the rest must be real entries below it (the sandbox
// may have made any link there), so it is handed over as the root and a path below it.
async function resolveOutside(
  path: string,
  roots: RootReal[],
): Promise<{ real: string } | { root: RootReal; rel: string }> {
  let parts = path.split('/').filter(Boolean)
  let cur = '/'
  for (let hops = 0; ; ) {
    const r = roots.find((x) => within(cur, x.real))
    if (r) return { root: r, rel: relative(r.real, join(cur, ...parts)) }
    const part = parts.shift()
    if (part === undefined) return { real: cur }
    const next = join(cur, part)
    const st = await lstat(next)
    if (!st.isSymbolicLink()) {
      cur = next
      continue
    }
    if (++hops > 40) throw new Error(`too many symlinks in ${path}`)
    const target = await readlink(next)
    if (target.startsWith('/')) cur = '/'
    parts = [...target.split('/').filter(Boolean), ...parts]
  }
}

// A person's folder or file, resolved (resolveOutside). A file is located by its folder (a
// Tree is a directory) and its name.
async function locateOutside(
  path: string,
  roots: RootReal[],
  file = false,
): Promise<Located & { real?: string }> {
  const where = await resolveOutside(path, roots)
  if ('root' in where)
    return { tree: Tree.open(where.root.real), rel: where.rel, sessionPath: join(where.root.root, where.rel) }
  const real = where.real
  if (file) return { tree: Tree.open(dirname(real)), rel: basename(real), real }
  return { tree: Tree.open(real), rel: '', real }
}

const sub = (rel: string, name: string) => (rel === '' ? name : `${rel}/${name}`)

async function readText(tree: Tree, rel: string): Promise<string | { error: string }> {
  const f = await tree.openFile(rel)
  if (!f) return { error: 'missing, or not a regular file (links are not followed under a session root)' }
  try {
    const { data, over } = await readCapped(f.fd, MAX_FILE_BYTES)
    if (f.st.size > MAX_FILE_BYTES || over) return { error: `larger than ${MAX_FILE_BYTES} bytes` }
    return data.toString('utf8')
  } finally {
    await closeFd(f.fd)
  }
}

// Regular files below the folder, sorted, bounded in count and depth; SKILL.md itself left out.
async function resources(tree: Tree, rel: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = (await tree.readdir(sub(rel, dir))).sort((a, b) => (a.name < b.name ? -1 : 1))
    for (const e of entries) {
      if (out.length >= MAX_RESOURCES) return
      const name = sub(dir, e.name)
      if (e.isFile() && name !== 'SKILL.md') out.push(name)
      else if (e.isDirectory() && depth < MAX_DEPTH) await walk(name, depth + 1)
    }
  }
  await walk('', 0)
  return out
}

// The entries of a place's folder: through the root's Tree (no links) or the person's own.
async function entriesOf(place: Place): Promise<{ entries: Dirent[]; tree?: Tree; rel: string }> {
  if (place.root) {
    const tree = Tree.open(place.root)
    const rel = relative(place.root, place.dir)
    return { entries: await tree.readdir(rel), tree, rel }
  }
  const entries = await readdir(place.dir, { withFileTypes: true }).catch(() => [] as Dirent[])
  return { entries, rel: '' }
}

// What reading one entry of a place gave: the thing, or why it is not usable (a problem naming
// the file); undefined when the entry is not of this kind and is passed over.
type Read<T> = { found: T } | { problem: string } | undefined
type Listing = Awaited<ReturnType<typeof entriesOf>>

const nameProblem = (name: string): string | undefined =>
  NAME.test(name)
    ? undefined
    : `name ${JSON.stringify(name)} is not a plain name (letters, digits, . _ -; up to 64)`

// One walk for skills and agent definitions: each place's entries in name order, each read by
// `read`; a place that cannot be listed is skipped, an entry that throws is a problem.
async function findIn<T>(
  places: Place[],
  kind: Problem['kind'],
  problems: Problem[],
  read: (place: Place, listing: Listing, e: Dirent, path: string) => Promise<Read<T>>,
): Promise<T[]> {
  const found: T[] = []
  for (const place of places) {
    let listing: Listing
    try {
      listing = await entriesOf(place)
    } catch {
      continue
    }
    try {
      for (const e of listing.entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const path = join(place.dir, e.name)
        try {
          const r = await read(place, listing, e, path)
          if (r && 'found' in r) found.push(r.found)
          else if (r) problems.push({ kind, path, reason: r.problem })
        } catch (err) {
          problems.push({ kind, path, reason: errorMessage(err) })
        }
      }
    } finally {
      await listing.tree?.close()
    }
  }
  return found
}

async function skillAt(loc: Located, path: string, mountSource: string | undefined): Promise<Read<Skill>> {
  // What is mounted is the folder as opened (its fd), not as the walk named it a moment before.
  const source =
    mountSource !== undefined && !loc.sessionPath ? readlinkSync(`/proc/self/fd/${loc.tree.fd}`) : undefined
  if (source !== undefined && holdsVisHome(source))
    return { problem: 'the folder is or contains a vis home, which no session may see' }
  const text = await readText(loc.tree, sub(loc.rel, 'SKILL.md'))
  if (typeof text !== 'string') return { problem: `SKILL.md: ${text.error}` }
  const fm = parseFrontmatter(text)
  if (!fm.ok) return { problem: fm.reason }
  const name = field(fm.data, 'name') ?? basename(path)
  const description = field(fm.data, 'description')
  const bad = nameProblem(name)
  if (bad) return { problem: bad }
  if (!description) return { problem: 'no `description` in the frontmatter: the prompt lists skills by it' }
  return {
    found: {
      name,
      description,
      path: join(path, 'SKILL.md'),
      sessionDir: loc.sessionPath ?? `${SKILLS_MOUNT}/${name}`,
      ...(source !== undefined ? { mountSource: source, mountPin: rootIdentity(loc.tree.fd) } : {}),
      resources: await resources(loc.tree, loc.rel),
      text,
    },
  }
}

// A skill is a folder holding SKILL.md.
function findSkills(places: Place[], roots: RootReal[], problems: Problem[]): Promise<Skill[]> {
  return findIn(places, 'skill', problems, async (place, listing, e, path) => {
    if (listing.tree) {
      if (!e.isDirectory())
        return e.isSymbolicLink() ? { problem: 'a symlink under a session root: not followed' } : undefined
      const rel = sub(listing.rel, e.name)
      return skillAt({ tree: listing.tree, rel, sessionPath: join(place.root!, rel) }, path, undefined)
    }
    if (!e.isDirectory() && !e.isSymbolicLink()) return undefined
    const loc = await locateOutside(path, roots)
    try {
      return await skillAt(loc, path, loc.real)
    } finally {
      await loc.tree.close()
    }
  })
}

function agentFrom(text: string, path: string): Read<AgentDefinition> {
  const fm = parseFrontmatter(text)
  if (!fm.ok) return { problem: fm.reason }
  const name = field(fm.data, 'name') ?? basename(path, '.md')
  const bad = nameProblem(name)
  if (bad) return { problem: bad }
  const description = field(fm.data, 'description')
  if (!description) return { problem: 'no `description` in the frontmatter: the prompt lists agents by it' }
  const model = field(fm.data, 'model')
  const tools = listField(fm.data, 'tools')
  return {
    found: {
      name,
      description,
      ...(model ? { model } : {}),
      ...(tools ? { tools } : {}),
      prompt: fm.body.trim(),
      path,
    },
  }
}

// An agent definition is a markdown file.
function findAgents(places: Place[], roots: RootReal[], problems: Problem[]): Promise<AgentDefinition[]> {
  return findIn(places, 'agent', problems, async (_place, listing, e, path) => {
    if (!e.name.endsWith('.md')) return undefined
    let text: string | { error: string }
    if (listing.tree) text = await readText(listing.tree, sub(listing.rel, e.name))
    else {
      if (e.isDirectory()) return undefined
      const loc = await locateOutside(path, roots, true)
      try {
        text = await readText(loc.tree, loc.rel)
      } finally {
        await loc.tree.close()
      }
    }
    return typeof text === 'string' ? agentFrom(text, path) : { problem: text.error }
  })
}

// Every skill and agent definition the session can use, first name winning; what could not
// be read and what was shadowed, for `vis doctor` and the turn's warnings.
export async function discover(input: PlaceInput): Promise<Found> {
  const roots = await realRoots(input.roots)
  const problems: Problem[] = []
  const skills = firstNameWins(await findSkills(skillPlaces(input), roots, problems))
  const agents = firstNameWins(await findAgents(agentPlaces(input), roots, problems))
  return {
    skills: skills.kept,
    agents: agents.kept,
    problems,
    shadowed: [
      ...skills.shadowed.map((s) => ({ kind: 'skill' as const, ...s })),
      ...agents.shadowed.map((s) => ({ kind: 'agent' as const, ...s })),
    ],
  }
}
