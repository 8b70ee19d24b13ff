import { VisError } from '../util/errors.js'
import { ownValue } from '../util/own-key.js'
import { type AgentConfig, PROVIDERS } from './config.js'

// Which models a turn may be asked to use by someone other than the person who configured the
// host: a block choosing a child turn's model (sub_loop(model=...), an agent definition's
// `model`) and an HTTP client starting a turn (POST /v1/sessions/{id}/turns "model"). The model
// request is the host's, not the sandbox's or the client's: it leaves past the egress policy,
// from the host, so a model reference that picks an endpoint is a network choice they must not
// make. Only what the person configured is allowed:
//   - the default model (VIS_MODEL, agent.json "model"), and any model of its provider;
//   - every model agent.json's "aliases" name, by alias or by its <provider>/<model>;
//   - any model of a provider with an entry in agent.json's "providers" (its endpoint is one the
//     person set up, even as `{}` to accept a preset's address);
//   - for a child, also the parent turn's own model (its provider object is reused as is).
// Everything else (a built-in preset's loopback address nobody configured, a provider only an
// API key in the environment would open) is refused before any request: agent.model-not-allowed.
// The person's own choices (a library caller's TurnOptions.model, `vis chat --model`) are not
// judged here: they are the configuration.
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

// The configured reference `asked` names (an alias resolved), or undefined when it names none.
function judged(rule: ChildModelRule, asked: string, also: string[]): string | undefined {
  // Own keys only: a model named "constructor" or "__proto__" is not an alias agent.json gave.
  const ref = ownValue(rule.aliases, asked) ?? asked
  if (also.includes(ref) || rule.refs.includes(ref)) return ref
  const slash = ref.indexOf('/')
  if (slash > 0 && rule.providers.includes(ref.slice(0, slash))) return ref
  return undefined
}

// What the person configured, for the refusal's message: named models, then whole providers.
function allowedText(rule: ChildModelRule, also: string[]): string {
  const named = [...also, ...rule.refs, ...Object.keys(rule.aliases)]
  const list = [...new Set(named.filter((m) => m !== '')), ...rule.providers.map((p) => `${p}/<any model>`)]
  return list.length > 0 ? list.join(', ') : 'none'
}

const HOW_TO_ALLOW =
  'to allow another, add it to agent.json\'s "aliases" or its provider to "providers" (agent.json in the ' +
  "server's vis home), or set VIS_MODEL"

// The <provider>/<model> a child runs with (an alias resolved), or agent.model-not-allowed.
export function allowedChildModel(
  rule: ChildModelRule,
  asked: string,
  parentModel: string,
  ctx: { sessionId: string; op: string },
): string {
  const ref = judged(rule, asked, [parentModel])
  if (ref !== undefined) return ref
  throw new VisError(
    'agent.model-not-allowed',
    `A child turn may not use model ${JSON.stringify(asked)}: only models the person configured are ` +
      `allowed (${allowedText(rule, [parentModel])}). Leave model unset to use this turn's model; ` +
      `${HOW_TO_ALLOW}.`,
    { ...ctx, model: asked },
  )
}

// The <provider>/<model> a turn an HTTP client started runs with (an alias resolved), or
// agent.model-not-allowed. A reference that is not <provider>/<model> with a known provider is
// passed on as given: resolveModel refuses it as agent.bad-model, as before.
export function allowedTurnModel(
  rule: ChildModelRule,
  asked: string,
  ctx: { sessionId: string; op: string },
): string {
  const ref = judged(rule, asked, [])
  if (ref !== undefined) return ref
  const slash = asked.indexOf('/')
  if (slash <= 0 || !(PROVIDERS as readonly string[]).includes(asked.slice(0, slash))) return asked
  throw new VisError(
    'agent.model-not-allowed',
    `This server does not run turns with model ${JSON.stringify(asked)}: a turn may only use a model the ` +
      `server's configuration names (${allowedText(rule, [])}). Leave model unset for the default model; ` +
      `${HOW_TO_ALLOW}, and restart the server.`,
    { ...ctx, model: asked },
  )
}
