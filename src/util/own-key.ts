// A value a configuration object holds under a key someone else chose (a model name a client or
// a block asked for, a tool name in an agent definition), or undefined when the object itself
// does not hold it. A plain object's `obj[key]` also answers the keys of Object.prototype:
// "constructor", "toString", "__proto__"... give a function or the prototype, not undefined, and
// the caller then treats that as the configured string or number it expected.
export function ownValue<T>(obj: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return obj !== undefined && Object.hasOwn(obj, key) ? obj[key] : undefined
}

// Sets obj[key] as an own property whatever the key: a plain assignment of "__proto__" replaces
// the object's prototype instead (a skill's frontmatter `__proto__: [a, b]`, a tool parameter so
// named), after which `in` and lookups answer the new prototype's keys.
export function setOwn<T>(obj: Record<string, T>, key: string, value: NoInfer<T>): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}
