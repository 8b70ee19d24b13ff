import { VisError } from '../util/errors.js'
import type { AgentConfig } from './config.js'

// Which models a block may choose for a child turn (sub_loop(model=...), an agent definition's
// `model`). The request is the host's, not the sandbox's: it leaves past the egress policy, so a
// model reference that picks an endpoint is a network choice the block must not make. A child
// may only use what the person configured:
//   - the parent turn's own model (its provider object is reused as is);
//   - the default model (VIS_MODEL, agent.json "model"), and any model of its provider;
//   - every model agent.json's "aliases" name, by alias or by its <provider>/<model>;
//   - any model of a provider with an entry in agent.json's "providers" (its endpoint is one the
//     person set up, even as `{}` to accept a preset's address).
// Everything else (a built-in preset's loopback address nobody configured, a provider only an
// API key in the environment would open) is refused before any request: agent.model-not-allowed.
export type ChildModelRule = {
  refs: string[]
  providers: string[]
  aliases: Readonly<Record<string, string>>
}

export function childModelRule(config: AgentConfig, env: NodeJS.ProcessEnv = process.env): ChildModelRule {
  const aliases = config.aliases ?? {}
  const dflt = env.VIS_MODEL ?? config.model
  const providerOf = (ref: string) => ref.slice(0, Math.max(0, ref.indexOf('/')))
  return {
    refs: [...new Set([...(dflt ? [dflt] : []), ...Object.values(aliases)])],
    providers: [
      ...new Set([...Object.keys(config.providers ?? {}), ...(dflt ? [providerOf(dflt)] : [])]),
    ].filter((p) => p !== ''),
    aliases,
  }
}

// The <provider>/<model> a child runs with (an alias resolved), or agent.model-not-allowed.
export function allowedChildModel(
  rule: ChildModelRule,
  asked: string,
  parentModel: string,
  ctx: { sessionId: string; op: string },
): string {
  const ref = rule.aliases[asked] ?? asked
  if (ref === parentModel || rule.refs.includes(ref)) return ref
  const slash = ref.indexOf('/')
  if (slash > 0 && rule.providers.includes(ref.slice(0, slash))) return ref
  const named = [parentModel, ...rule.refs, ...Object.keys(rule.aliases)]
  const allowed = [
    ...new Set(named.filter((m) => m !== '')),
    ...rule.providers.map((p) => `${p}/<any model>`),
  ].join(', ')
  throw new VisError(
    'agent.model-not-allowed',
    `A child turn may not use model ${JSON.stringify(asked)}: only models the person configured are ` +
      `allowed (${allowed}). Leave model unset to use this turn's model; to allow another, add it to ` +
      'agent.json\'s "aliases" or its provider to "providers".',
    { ...ctx, model: asked },
  )
}
