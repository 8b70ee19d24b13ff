// TEST-ONLY: a pause between a check and the use it guards. The host's file code awaits
// checkpoint() at each place where something else (the sandbox) could swap an entry between
// what the host looked at and what it then reads or writes; a race test installs a hook that
// performs the swap there, so the attack lands every time instead of by timing. Production
// code never installs one: checkpoint() is then a resolved no-op.
export type CheckUseHook = (point: string, rel: string) => Promise<void> | void

let hook: CheckUseHook | undefined

// Tests only (test/security/...): undefined removes it.
export function setCheckUseHook(h: CheckUseHook | undefined): void {
  hook = h
}

export async function checkpoint(point: string, rel: string): Promise<void> {
  if (hook) await hook(point, rel)
}
