// A test that needs a piece a fresh checkout may lack (another CPython minor staged, the
// prebuilds) skips with one line naming it and the command that provides it, so the README's
// `npm test` passes after the README's set-up. CI sets VIS_TEST_REQUIRE_ALL=1: there a missing
// piece fails the file instead, so CI can never go green by skipping.
//   test('...', { skip: needs(existsSync(x), 'the 3.12 prebuild', 'npm run release:pack') }, fn)
export function needs(present: boolean, what: string, command: string): false | string {
  if (present) return false
  const line = `needs ${what}: run \`${command}\``
  if (process.env.VIS_TEST_REQUIRE_ALL === '1') throw new Error(`${line} (VIS_TEST_REQUIRE_ALL=1: no skips)`)
  return line
}
