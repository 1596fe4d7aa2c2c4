/**
 * The public surface against its use: every name exported from each package's public entries
 * (the `exports` of its package.json, read through the `poise-source` condition) and whether a
 * file outside that package (other packages, apps, bench, tools, examples) imports it. A name
 * nobody outside imports is either internal (un-export it) or public API a user is meant to
 * call, which its README then documents. Usage:
 *
 *   pnpm exports:count            # one line per package, then the total
 *   pnpm exports:count --list     # also every name used nowhere outside, per entry
 *   pnpm exports:count --json     # the whole table as JSON
 *
 * Imports are read syntactically (TypeScript's parser, no type check): `import { a }`,
 * `import type { A }`, `export { a } from`, `import('…').A` in types, `await import('…')`
 * destructured, and a namespace import through its `ns.a` and `const { a } = ns` uses (a
 * namespace used any other way counts every name as used, and is reported).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root (this file is tools/architecture/exports.ts). */
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where importing files are looked for, relative to the root. */
const SCAN_DIRS = ['packages', 'apps', 'bench', 'tools', 'examples'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.turbo', 'docs', 'coverage', 'test-output', 'api']);
const SOURCE_EXT = /\.(?:[cm]?ts|tsx|[cm]?js)$/;
const SOURCE_CONDITION = 'poise-source';

export interface EntryReport {
  /** `@poise/usage` or `@poise/usage/testing`. */
  specifier: string;
  /** The entry's source file, relative to the root. */
  file: string;
  /** Every exported name, sorted by byte order. */
  names: string[];
  /** The exported names no file outside the package imports, sorted. */
  unused: string[];
  /** Of `unused`: the names a README example imports (public API documented for users). */
  documented: string[];
  /**
   * Of `unused`, not documented: the names the public shape (parameters, results, members) of
   * an imported or documented name refers to, so a user can name what they are handed.
   */
  signature: string[];
}

export interface PackageReport {
  name: string;
  /** Directory relative to the root (`packages/usage`). */
  dir: string;
  entries: EntryReport[];
}

export interface SurfaceReport {
  packages: PackageReport[];
  /** Files that use a namespace import as a whole (every name of that entry counted as used). */
  wholeNamespaces: string[];
  exported: number;
  unused: number;
  documented: number;
  signature: number;
}

interface PackageInfo {
  name: string;
  dir: string;
  /** subpath specifier → absolute source file */
  entries: Map<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

/** The source file an `exports` value resolves to under the `poise-source` condition. */
function sourceTarget(value: unknown, where: string): string {
  if (isRecord(value) && typeof value[SOURCE_CONDITION] === 'string') return value[SOURCE_CONDITION];
  throw new Error(`${where}: the export has no '${SOURCE_CONDITION}' condition naming its source file`);
}

/** Every package under packages/ and apps/ with an `exports` field, and its entries. */
export function listEntries(root: string = REPO_ROOT): PackageInfo[] {
  const out: PackageInfo[] = [];
  for (const parent of ['packages', 'apps']) {
    const parentDir = join(root, parent);
    if (!existsSync(parentDir)) continue;
    for (const entry of readdirSync(parentDir).sort()) {
      const dir = join(parentDir, entry);
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      const name = manifest.name;
      if (typeof name !== 'string' || !isRecord(manifest.exports)) continue;
      const entries = new Map<string, string>();
      for (const [subpath, value] of Object.entries(manifest.exports)) {
        if (subpath === './package.json') continue;
        const where = `${toPosix(relative(root, file))} exports['${subpath}']`;
        const specifier = subpath === '.' ? name : `${name}/${subpath.replace(/^\.\//, '')}`;
        entries.set(specifier, join(dir, sourceTarget(value, where)));
      }
      out.push({ name, dir, entries });
    }
  }
  return out;
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

function hasExportModifier(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

/** The names an entry file exports (named exports only: the house style has no `export *`). */
export function exportedNames(file: string, root: string = REPO_ROOT): string[] {
  const source = parse(file);
  const names = new Set<string>();
  const where = toPosix(relative(root, file));
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) {
        throw new Error(`${where}: 'export *' hides the entry's names; export them by name (STYLE.md)`);
      }
      if (ts.isNamespaceExport(statement.exportClause)) names.add(statement.exportClause.name.text);
      else for (const element of statement.exportClause.elements) names.add(element.name.text);
    } else if (ts.isExportAssignment(statement)) {
      names.add('default');
    } else if (hasExportModifier(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name)) names.add(declaration.name.text);
        }
      } else if (
        (ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          ts.isInterfaceDeclaration(statement) ||
          ts.isTypeAliasDeclaration(statement) ||
          ts.isEnumDeclaration(statement)) &&
        statement.name
      ) {
        names.add(statement.name.text);
      }
    }
  }
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function walkFiles(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name)) continue;
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) walkFiles(path, out);
    else if (SOURCE_EXT.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** What one file imports: specifier → names, plus specifiers whose namespace it uses whole. */
export interface FileImports {
  names: Map<string, Set<string>>;
  whole: Set<string>;
}

function stringLiteral(node: ts.Node | undefined): string | undefined {
  return node && ts.isStringLiteralLike(node) ? node.text : undefined;
}

/** Names bound by `{ a, b: c }` (the property names, `a` and `b`); undefined for another pattern. */
function destructuredNames(pattern: ts.BindingName): string[] | undefined {
  if (!ts.isObjectBindingPattern(pattern)) return undefined;
  const names: string[] = [];
  for (const element of pattern.elements) {
    if (element.dotDotDotToken) return undefined;
    const key = element.propertyName ?? element.name;
    if (ts.isIdentifier(key) || ts.isStringLiteral(key)) names.push(key.text);
    else return undefined;
  }
  return names;
}

/**
 * The entry a relative specifier of `file` names (`../packages/usage/src/index`), or undefined
 * when it names another file or is not relative.
 */
function relativeEntry(file: string, specifier: string, byFile: Map<string, string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(file), specifier.replace(/\.[cm]?js$/, ''));
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) {
    const entry = byFile.get(candidate);
    if (entry) return entry;
  }
  return undefined;
}

/**
 * The imports of one file from package entries, keyed by entry specifier; `entryOf` maps a
 * module specifier to the entry it names (`@poise/usage`), or undefined for any other module.
 */
export function importsOf(source: ts.SourceFile, entryOf: (specifier: string) => string | undefined): FileImports {
  const names = new Map<string, Set<string>>();
  const whole = new Set<string>();
  const add = (specifier: string, name: string) => {
    let set = names.get(specifier);
    if (!set) names.set(specifier, (set = new Set()));
    set.add(name);
  };
  const entry = (specifier: string | undefined) => (specifier === undefined ? undefined : entryOf(specifier));
  /** namespace identifier → specifier */
  const namespaces = new Map<string, string>();

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const specifier = entry(stringLiteral(node.moduleSpecifier));
      const clause = node.importClause;
      if (specifier && clause) {
        if (clause.name) add(specifier, 'default');
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) {
          for (const element of bindings.elements) add(specifier, (element.propertyName ?? element.name).text);
        } else if (bindings && ts.isNamespaceImport(bindings)) {
          namespaces.set(bindings.name.text, specifier);
        }
      }
    } else if (ts.isExportDeclaration(node)) {
      const specifier = entry(stringLiteral(node.moduleSpecifier));
      if (specifier) {
        if (!node.exportClause || ts.isNamespaceExport(node.exportClause)) whole.add(specifier);
        else
          for (const element of node.exportClause.elements) add(specifier, (element.propertyName ?? element.name).text);
      }
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      const specifier = entry(
        ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal) ? argument.literal.text : undefined,
      );
      if (specifier) {
        if (node.qualifier) {
          let left: ts.EntityName = node.qualifier;
          while (ts.isQualifiedName(left)) left = left.left;
          add(specifier, left.text);
        } else {
          whole.add(specifier);
        }
      }
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const specifier = entry(stringLiteral(node.arguments[0]));
      if (specifier) {
        // `const { a } = await import('…')`, `(await import('…')).a`, else the whole namespace
        let parent: ts.Node = node.parent;
        if (ts.isAwaitExpression(parent)) parent = parent.parent;
        while (ts.isParenthesizedExpression(parent)) parent = parent.parent;
        const destructured = ts.isVariableDeclaration(parent) ? destructuredNames(parent.name) : undefined;
        if (destructured) for (const name of destructured) add(specifier, name);
        else if (ts.isPropertyAccessExpression(parent)) add(specifier, parent.name.text);
        else whole.add(specifier);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);

  if (namespaces.size > 0) {
    const useNamespace = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && namespaces.has(node.text)) {
        const specifier = namespaces.get(node.text)!;
        const parent = node.parent;
        if (ts.isNamespaceImport(parent)) {
          // the binding itself
        } else if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
          add(specifier, parent.name.text);
        } else if (ts.isQualifiedName(parent) && parent.left === node) {
          add(specifier, parent.right.text);
        } else if (ts.isVariableDeclaration(parent) && parent.initializer === node && destructuredNames(parent.name)) {
          for (const name of destructuredNames(parent.name)!) add(specifier, name);
        } else {
          whole.add(specifier);
        }
      }
      ts.forEachChild(node, useNamespace);
    };
    useNamespace(source);
  }
  return { names, whole };
}

/** The fenced code blocks of a Markdown file that are TypeScript or JavaScript, as one source. */
function markdownCode(file: string): ts.SourceFile | undefined {
  const blocks: string[] = [];
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(ts|typescript|js|javascript|mjs|cjs)\s*$/i.exec(lines[i]!);
    if (!open) continue;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    blocks.push(body.join('\n'));
  }
  if (blocks.length === 0) return undefined;
  return ts.createSourceFile(`${file}.ts`, blocks.join('\n;\n'), ts.ScriptTarget.Latest, true);
}

function walkMarkdown(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name) || name === 'CHANGELOG.md') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walkMarkdown(path, out);
    else if (name.endsWith('.md')) out.push(path);
  }
  return out;
}

function addAll(map: Map<string, Set<string>>, specifier: string, names: Iterable<string>): void {
  let set = map.get(specifier);
  if (!set) map.set(specifier, (set = new Set()));
  for (const name of names) set.add(name);
}

/**
 * The exported names (specifier → names) that the public shape of `kept` refers to: the types
 * of parameters, results, properties and members, type arguments and constraints, followed
 * through every type declared in the repository (the library and Node.js types are not opened,
 * their type arguments are). Private and protected members do not count.
 */
function signatureClosure(packages: PackageInfo[], kept: Map<string, Set<string>>): Map<string, Set<string>> {
  const files = packages.flatMap((p) => [...p.entries.values()]);
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    customConditions: [SOURCE_CONDITION],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const resolveAlias = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

  /** declared symbol → the (specifier, name) pairs that export it */
  const exportsOf = new Map<ts.Symbol, Array<[string, string]>>();
  /** (specifier, name) → declared symbol */
  const symbolOf = new Map<string, ts.Symbol>();
  for (const pkg of packages) {
    for (const [specifier, file] of pkg.entries) {
      const source = program.getSourceFile(file);
      const moduleSymbol = source && checker.getSymbolAtLocation(source);
      if (!moduleSymbol) continue;
      for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
        const declared = resolveAlias(symbol);
        exportsOf.set(declared, [...(exportsOf.get(declared) ?? []), [specifier, symbol.name]]);
        symbolOf.set(`${specifier}\0${symbol.name}`, declared);
      }
    }
  }

  const inRepository = (symbol: ts.Symbol | undefined) =>
    (symbol?.declarations ?? []).some((d) => {
      const fileName = d.getSourceFile().fileName;
      return !fileName.includes('/node_modules/') && !program.isSourceFileDefaultLibrary(d.getSourceFile());
    });
  const isHidden = (symbol: ts.Symbol) =>
    symbol.name.startsWith('#') ||
    (symbol.declarations ?? []).some(
      (d) =>
        ts.canHaveModifiers(d) &&
        (ts.getModifiers(d) ?? []).some(
          (m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword,
        ),
    );

  const referenced = new Map<string, Set<string>>();
  const seenTypes = new Set<ts.Type>();
  const seenSymbols = new Set<ts.Symbol>();
  const queue: ts.Symbol[] = [];
  const mark = (symbol: ts.Symbol | undefined) => {
    if (!symbol) return;
    const declared = resolveAlias(symbol);
    for (const [specifier, name] of exportsOf.get(declared) ?? []) addAll(referenced, specifier, [name]);
    if (!seenSymbols.has(declared)) {
      seenSymbols.add(declared);
      queue.push(declared);
    }
  };
  // A type written as an alias of an alias (`type Options = TransportOptions`) reaches the
  // checker as the inner alias: the names written in the declaration count too.
  const markWritten = (node: ts.Node | undefined): void => {
    if (!node) return;
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const name = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      mark(checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name));
    } else if (ts.isTypeQueryNode(node)) {
      const name = node.exprName;
      mark(checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name));
    }
    ts.forEachChild(node, markWritten);
  };
  const markDeclared = (declaration: ts.Declaration | undefined): void => {
    if (!declaration) return;
    if (ts.isFunctionLike(declaration)) {
      for (const parameter of declaration.parameters) markWritten(parameter.type);
      markWritten(declaration.type);
      for (const parameter of declaration.typeParameters ?? []) markWritten(parameter.constraint);
    } else if (
      (ts.isPropertySignature(declaration) ||
        ts.isPropertyDeclaration(declaration) ||
        ts.isVariableDeclaration(declaration)) &&
      declaration.type
    ) {
      markWritten(declaration.type);
    } else if (ts.isTypeAliasDeclaration(declaration)) {
      markWritten(declaration.type);
    } else if (ts.isInterfaceDeclaration(declaration) || ts.isClassDeclaration(declaration)) {
      for (const clause of declaration.heritageClauses ?? []) markWritten(clause);
    }
  };
  const visitSignature = (signature: ts.Signature) => {
    markDeclared(signature.declaration);
    for (const parameter of signature.typeParameters ?? []) {
      const constraint = parameter.getConstraint();
      if (constraint) visitType(constraint);
    }
    for (const parameter of signature.parameters) visitType(checker.getTypeOfSymbol(parameter));
    visitType(checker.getReturnTypeOfSignature(signature));
  };
  const visitType = (type: ts.Type): void => {
    if (seenTypes.has(type)) return;
    seenTypes.add(type);
    if (type.aliasSymbol) mark(type.aliasSymbol);
    for (const argument of type.aliasTypeArguments ?? []) visitType(argument);
    if (type.isUnionOrIntersection()) {
      for (const member of type.types) visitType(member);
      return;
    }
    if (type.symbol) mark(type.symbol);
    if (!(type.flags & ts.TypeFlags.Object)) return;
    const object = type as ts.ObjectType;
    if (object.objectFlags & ts.ObjectFlags.Reference) {
      for (const argument of checker.getTypeArguments(type as ts.TypeReference)) visitType(argument);
    }
    if (!inRepository(type.symbol) && !(type.symbol?.name === '__type' || type.symbol?.name === '__object')) return;
    for (const property of checker.getPropertiesOfType(type)) {
      if (isHidden(property)) continue;
      markDeclared(property.valueDeclaration);
      visitType(checker.getTypeOfSymbol(property));
    }
    for (const signature of type.getCallSignatures()) visitSignature(signature);
    for (const signature of type.getConstructSignatures()) visitSignature(signature);
    for (const info of checker.getIndexInfosOfType(type)) visitType(info.type);
  };

  for (const [specifier, names] of kept) {
    for (const name of names) {
      const symbol = symbolOf.get(`${specifier}\0${name}`);
      if (symbol && !seenSymbols.has(symbol)) {
        seenSymbols.add(symbol);
        queue.push(symbol);
      }
    }
  }
  while (queue.length > 0) {
    const symbol = queue.pop()!;
    if (!inRepository(symbol)) continue;
    for (const declaration of symbol.declarations ?? []) markDeclared(declaration);
    if (symbol.flags & (ts.SymbolFlags.Value & ~ts.SymbolFlags.Class)) visitType(checker.getTypeOfSymbol(symbol));
    if (symbol.flags & ts.SymbolFlags.Class) {
      visitType(checker.getTypeOfSymbol(symbol));
      visitType(checker.getDeclaredTypeOfSymbol(symbol));
    }
    if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Enum)) {
      visitType(checker.getDeclaredTypeOfSymbol(symbol));
    }
  }
  return referenced;
}

/** The exported surface of every package and what files outside each package import of it. */
export function surfaceReport(root: string = REPO_ROOT): SurfaceReport {
  const packages = listEntries(root);
  const bySpecifier = new Map<string, PackageInfo>();
  for (const pkg of packages) for (const specifier of pkg.entries.keys()) bySpecifier.set(specifier, pkg);
  /** entry source file → its specifier (benchmarks import entries by relative path) */
  const byFile = new Map<string, string>();
  for (const pkg of packages) for (const [specifier, file] of pkg.entries) byFile.set(file, specifier);

  /** specifier → names imported from outside its package */
  const used = new Map<string, Set<string>>();
  const wholeUse = new Map<string, string[]>();
  const files = SCAN_DIRS.flatMap((d) => walkFiles(join(root, d)));
  for (const file of files) {
    const owner = packages.find((p) => file.startsWith(p.dir + sep));
    const entryOf = (specifier: string): string | undefined =>
      bySpecifier.has(specifier) ? specifier : relativeEntry(file, specifier, byFile);
    const imports = importsOf(parse(file), entryOf);
    for (const [specifier, names] of imports.names) {
      if (bySpecifier.get(specifier) !== owner) addAll(used, specifier, names);
    }
    for (const specifier of imports.whole) {
      if (bySpecifier.get(specifier) === owner) continue;
      wholeUse.set(specifier, [...(wholeUse.get(specifier) ?? []), toPosix(relative(root, file))]);
    }
  }

  /** specifier → names a README example imports (the package's own README counts: users read it) */
  const documented = new Map<string, Set<string>>();
  const markdown = [join(root, 'README.md'), ...SCAN_DIRS.flatMap((d) => walkMarkdown(join(root, d)))];
  for (const file of markdown.filter((f) => existsSync(f))) {
    const code = markdownCode(file);
    if (!code) continue;
    for (const [specifier, names] of importsOf(code, (s) => (bySpecifier.has(s) ? s : undefined)).names) {
      addAll(documented, specifier, names);
    }
  }

  const kept = new Map<string, Set<string>>();
  for (const map of [used, documented]) for (const [specifier, names] of map) addAll(kept, specifier, names);
  const referenced = signatureClosure(packages, kept);

  const reports: PackageReport[] = packages.map((pkg) => ({
    name: pkg.name,
    dir: toPosix(relative(root, pkg.dir)),
    entries: [...pkg.entries].map(([specifier, file]) => {
      const names = exportedNames(file, root);
      const usedNames = used.get(specifier) ?? new Set<string>();
      const unused = wholeUse.has(specifier) ? [] : names.filter((n) => !usedNames.has(n));
      const inReadme = unused.filter((n) => documented.get(specifier)?.has(n));
      const inSignature = unused.filter((n) => !inReadme.includes(n) && referenced.get(specifier)?.has(n));
      return {
        specifier,
        file: toPosix(relative(root, file)),
        names,
        unused,
        documented: inReadme,
        signature: inSignature,
      };
    }),
  }));
  const all = reports.flatMap((p) => p.entries);
  const sum = (f: (e: EntryReport) => number) => all.reduce((total, e) => total + f(e), 0);
  return {
    packages: reports,
    wholeNamespaces: [...wholeUse].flatMap(([specifier, users]) => users.map((u) => `${u} (${specifier})`)).sort(),
    exported: sum((e) => e.names.length),
    unused: sum((e) => e.unused.length),
    documented: sum((e) => e.documented.length),
    signature: sum((e) => e.signature.length),
  };
}

/** The report as the terminal shows it: a table, optionally each entry's unused names. */
export function formatReport(report: SurfaceReport, list: boolean): string {
  const lines: string[] = [];
  const width = Math.max(...report.packages.map((p) => p.name.length), 'package'.length);
  const columns = ['exported', 'unused outside', 'in a README', 'in a signature', 'neither'];
  lines.push(`${'package'.padEnd(width)}  ${columns.join('  ')}`);
  for (const pkg of report.packages) {
    const count = (f: (e: EntryReport) => number) => pkg.entries.reduce((total, e) => total + f(e), 0);
    const values = [
      count((e) => e.names.length),
      count((e) => e.unused.length),
      count((e) => e.documented.length),
      count((e) => e.signature.length),
      count((e) => e.unused.length - e.documented.length - e.signature.length),
    ];
    lines.push(`${pkg.name.padEnd(width)}  ${values.map((v, i) => String(v).padStart(columns[i]!.length)).join('  ')}`);
  }
  if (list) {
    for (const entry of report.packages.flatMap((p) => p.entries)) {
      if (entry.unused.length === 0) continue;
      lines.push('', `${entry.specifier} (${entry.file}), used nowhere outside its package:`);
      for (const name of entry.unused) {
        const why = entry.documented.includes(name)
          ? ' (a README example imports it)'
          : entry.signature.includes(name)
            ? ' (in the signature of used API)'
            : '';
        lines.push(`  ${name}${why}`);
      }
    }
  }
  for (const use of report.wholeNamespaces) lines.push(`note: ${use} uses the namespace as a whole`);
  const neither = report.unused - report.documented - report.signature;
  lines.push(
    '',
    `${report.unused} of ${report.exported} names exported from package entries are used nowhere outside their own package`,
    `(${report.documented} imported by a README example, ${report.signature} in the signature of used or documented API, ${neither} neither)`,
  );
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--list' && a !== '--json');
  if (unknown.length > 0) {
    process.stderr.write(`exports: unknown argument '${unknown[0]}' (expected --list or --json)\n`);
    process.exit(2);
  }
  const report = surfaceReport();
  process.stdout.write(
    args.includes('--json')
      ? `${JSON.stringify(report, null, 2)}\n`
      : `${formatReport(report, args.includes('--list'))}\n`,
  );
}
