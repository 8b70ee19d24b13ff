// The names the guest runtime itself owns in a session's globals (vis_guest/state.py
// SYSTEM_VAR_NAMES): a host hides them from the model's view of its own variables.
// test/sessions/system-vars.test.ts checks that both lists stay the same.
export const SYSTEM_VAR_NAMES: readonly string[] = Object.freeze([
  'session',
  '__name__',
  '__doc__',
  '__builtins__',
  '__annotations__',
  '__loader__',
  '__spec__',
  '__package__',
  '__file__',
  '__cached__',
])

const SYSTEM = new Set(SYSTEM_VAR_NAMES)

// True for a runtime-owned name: one of SYSTEM_VAR_NAMES or any other dunder name, the
// same rule the guest's live-vars view applies.
export function isSystemVarName(name: string): boolean {
  return SYSTEM.has(name) || (name.length > 4 && name.startsWith('__') && name.endsWith('__'))
}
