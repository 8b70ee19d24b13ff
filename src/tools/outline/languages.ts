import { extname } from 'node:path'
import type { SyntaxNode } from './syntax-node.js'

// What the index lists for one node type of a grammar.
export interface DefRule {
  kind: string
  // Definitions inside this one are listed too, one level deeper (class members, namespaces).
  descend?: boolean
  // The definition's name; default: the node's `name` field.
  name?: (n: SyntaxNode) => string | undefined
  // Only nodes this accepts are definitions (`const f = () => ...` but not `const n = 1`).
  when?: (n: SyntaxNode) => boolean
}

export interface LanguageSpec {
  id: string
  // The npm package that carries the grammar's WASM, and the file inside it.
  package: string
  wasm: string
  extensions: readonly string[]
  defs: Readonly<Record<string, DefRule>>
  // Nodes that wrap a single definition and belong to its lines (decorators, `export`,
  // `template<...>`): the definition's anchors span them.
  wrappers?: readonly string[]
  // Siblings that attach to the definition after them (Rust's `#[derive(...)]`).
  leading?: readonly string[]
}

const field = (n: SyntaxNode, f: string) => n.childForFieldName(f)?.text

// C and C++ name a function inside nested declarators: `*(*f)(int)`, `Foo::bar(int) const`.
const NAME_TYPES = new Set([
  'identifier',
  'field_identifier',
  'type_identifier',
  'qualified_identifier',
  'destructor_name',
  'operator_name',
  'template_function',
])
export function declaratorNameNode(n: SyntaxNode): SyntaxNode | undefined {
  let d = n.childForFieldName('declarator')
  for (let hops = 0; d && hops < 16; hops++) {
    if (NAME_TYPES.has(d.type)) return d
    d = d.childForFieldName('declarator')
  }
  return undefined
}
const declaratorName = (n: SyntaxNode) => declaratorNameNode(n)?.text
function declaresFunction(n: SyntaxNode): boolean {
  let d = n.childForFieldName('declarator')
  for (let hops = 0; d && hops < 16; hops++) {
    if (d.type === 'function_declarator') return true
    d = d.childForFieldName('declarator')
  }
  return false
}

const FUNCTION_VALUES = new Set([
  'arrow_function',
  'function_expression',
  'function',
  'generator_function',
  'class',
])
const jsBinding: DefRule = {
  kind: 'function',
  when: (n) => FUNCTION_VALUES.has(n.childForFieldName('value')?.type ?? ''),
}

const jsDefs: Record<string, DefRule> = {
  function_declaration: { kind: 'function' },
  generator_function_declaration: { kind: 'function' },
  class_declaration: { kind: 'class', descend: true },
  method_definition: { kind: 'method' },
  variable_declarator: jsBinding,
}
const tsDefs: Record<string, DefRule> = {
  ...jsDefs,
  abstract_class_declaration: { kind: 'class', descend: true },
  interface_declaration: { kind: 'interface' },
  type_alias_declaration: { kind: 'type' },
  enum_declaration: { kind: 'enum' },
  internal_module: { kind: 'namespace', descend: true },
  module: { kind: 'module', descend: true },
  abstract_method_signature: { kind: 'method' },
  function_signature: { kind: 'function' },
}
const jsWrappers = ['export_statement', 'lexical_declaration', 'variable_declaration']
const tsWrappers = [...jsWrappers, 'ambient_declaration']

// Go: a method's receiver type is part of its name (`Server.Close`).
function goMethodName(n: SyntaxNode): string | undefined {
  const name = field(n, 'name')
  const recv = n.childForFieldName('receiver')?.namedChildren[0]?.childForFieldName('type')
  const type = recv?.text.replace(/^\*/, '')
  return type ? `${type}.${name}` : name
}
function goTypeKind(n: SyntaxNode): string {
  const t = n.childForFieldName('type')?.type
  return t === 'struct_type' ? 'struct' : t === 'interface_type' ? 'interface' : 'type'
}

function rustImplName(n: SyntaxNode): string | undefined {
  const type = field(n, 'type')
  const trait = field(n, 'trait')
  return trait ? `${trait} for ${type}` : type
}

const cDefs: Record<string, DefRule> = {
  function_definition: { kind: 'function', name: declaratorName },
  declaration: { kind: 'function', name: declaratorName, when: declaresFunction },
  struct_specifier: { kind: 'struct', when: (n) => !!n.childForFieldName('body') },
  union_specifier: { kind: 'union', when: (n) => !!n.childForFieldName('body') },
  enum_specifier: { kind: 'enum', when: (n) => !!n.childForFieldName('body') },
  type_definition: { kind: 'typedef', name: declaratorName },
}
const cppDefs: Record<string, DefRule> = {
  ...cDefs,
  struct_specifier: { kind: 'struct', descend: true, when: (n) => !!n.childForFieldName('body') },
  class_specifier: { kind: 'class', descend: true, when: (n) => !!n.childForFieldName('body') },
  namespace_definition: { kind: 'namespace', descend: true, name: (n) => field(n, 'name') ?? '(anonymous)' },
  field_declaration: { kind: 'function', name: declaratorName, when: declaresFunction },
}

export const LANGUAGES: readonly LanguageSpec[] = [
  {
    id: 'python',
    package: 'tree-sitter-python',
    wasm: 'tree-sitter-python.wasm',
    extensions: ['.py', '.pyi'],
    defs: {
      class_definition: { kind: 'class', descend: true },
      function_definition: { kind: 'def' },
    },
    wrappers: ['decorated_definition'],
  },
  {
    id: 'typescript',
    package: 'tree-sitter-typescript',
    wasm: 'tree-sitter-typescript.wasm',
    extensions: ['.ts', '.mts', '.cts'],
    defs: tsDefs,
    wrappers: tsWrappers,
  },
  {
    id: 'tsx',
    package: 'tree-sitter-typescript',
    wasm: 'tree-sitter-tsx.wasm',
    extensions: ['.tsx'],
    defs: tsDefs,
    wrappers: tsWrappers,
  },
  {
    id: 'javascript',
    package: 'tree-sitter-javascript',
    wasm: 'tree-sitter-javascript.wasm',
    extensions: ['.js', '.jsx', '.mjs', '.cjs'],
    defs: jsDefs,
    wrappers: jsWrappers,
  },
  {
    id: 'go',
    package: 'tree-sitter-go',
    wasm: 'tree-sitter-go.wasm',
    extensions: ['.go'],
    defs: {
      function_declaration: { kind: 'func' },
      method_declaration: { kind: 'method', name: goMethodName },
      type_spec: { kind: 'type' },
    },
    wrappers: ['type_declaration'],
  },
  {
    id: 'rust',
    package: 'tree-sitter-rust',
    wasm: 'tree-sitter-rust.wasm',
    extensions: ['.rs'],
    defs: {
      function_item: { kind: 'fn' },
      function_signature_item: { kind: 'fn' },
      struct_item: { kind: 'struct' },
      enum_item: { kind: 'enum' },
      union_item: { kind: 'union' },
      trait_item: { kind: 'trait', descend: true },
      impl_item: { kind: 'impl', descend: true, name: rustImplName },
      mod_item: { kind: 'mod', descend: true },
      type_item: { kind: 'type' },
      macro_definition: { kind: 'macro' },
    },
    leading: ['attribute_item'],
  },
  {
    id: 'java',
    package: 'tree-sitter-java',
    wasm: 'tree-sitter-java.wasm',
    extensions: ['.java'],
    defs: {
      class_declaration: { kind: 'class', descend: true },
      interface_declaration: { kind: 'interface', descend: true },
      enum_declaration: { kind: 'enum', descend: true },
      record_declaration: { kind: 'record', descend: true },
      annotation_type_declaration: { kind: 'annotation' },
      method_declaration: { kind: 'method' },
      constructor_declaration: { kind: 'constructor' },
    },
  },
  {
    id: 'c',
    package: 'tree-sitter-c',
    wasm: 'tree-sitter-c.wasm',
    extensions: ['.c', '.h'],
    defs: cDefs,
  },
  {
    id: 'cpp',
    package: 'tree-sitter-cpp',
    wasm: 'tree-sitter-cpp.wasm',
    extensions: ['.cc', '.cpp', '.cxx', '.c++', '.hh', '.hpp', '.hxx', '.h++', '.ipp'],
    defs: cppDefs,
    wrappers: ['template_declaration'],
  },
  {
    // Not among the grammars the package suggests: a project adds it when it wants Ruby.
    id: 'ruby',
    package: 'tree-sitter-ruby',
    wasm: 'tree-sitter-ruby.wasm',
    extensions: ['.rb'],
    defs: {
      class: { kind: 'class', descend: true },
      module: { kind: 'module', descend: true },
      method: { kind: 'def' },
      singleton_method: { kind: 'def' },
    },
  },
]

// Go's type kind depends on the type it names; every other kind is the rule's.
export function kindOf(rule: DefRule, node: SyntaxNode): string {
  return node.type === 'type_spec' ? goTypeKind(node) : rule.kind
}

export function languageFor(path: string): LanguageSpec | undefined {
  const ext = extname(path).toLowerCase()
  return LANGUAGES.find((l) => l.extensions.includes(ext))
}
