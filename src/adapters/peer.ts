import { VisError } from '../util/errors.js'

// The frameworks are optional peer dependencies: a user of one adapter installs only that
// framework. Importing an adapter without it fails here, naming what to install, instead of
// with Node's resolution error from inside the package.
export async function loadPeer<T>(
  pkg: string,
  range: string,
  adapter: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load()
  } catch (err) {
    const code = (err as { code?: unknown }).code
    const missing =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      String((err as Error).message).includes(`'${pkg}'`)
    if (!missing) throw err
    throw new VisError(
      'adapter.peer-missing',
      `vis-runtime/${adapter} needs the package ${pkg} (${range}), which is not installed: run npm install ${pkg}@"${range}"`,
      { op: `import vis-runtime/${adapter}`, package: pkg },
      { cause: err },
    )
  }
}
