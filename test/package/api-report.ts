// The public surface of every package entry ("exports" of package.json), as the compiler sees it: each
// exported name with its kind. `api-report/<entry>.api.md` holds it, committed; the API report test
// compares, so a change to the surface is a reviewed diff (`UPDATE_API_REPORT=1` rewrites the files).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './package.util.js';

/** The entries of package.json with the source file behind each. */
export function packageEntries(): { entry: string; source: string }[] {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([entry, target]) => ({
      entry,
      source: (target as { default: string }).default.replace('./dist/', '').replace(/\.js$/, '.ts'),
    }));
}

function kindOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const f = target.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  return 'other';
}

function isDeprecated(symbol: ts.Symbol, checker: ts.TypeChecker): boolean {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return target.getJsDocTags(checker).some((tag) => tag.name === 'deprecated');
}

/** The report of every entry: file name → content. */
export function apiReports(): Map<string, string> {
  const entries = packageEntries();
  const program = ts.createProgram(
    entries.map((e) => join(repoRoot, e.source)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      experimentalDecorators: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const reports = new Map<string, string>();
  for (const { entry, source } of entries) {
    const file = program.getSourceFile(join(repoRoot, source));
    const module = file && checker.getSymbolAtLocation(file);
    const lines = (module ? checker.getExportsOfModule(module) : [])
      .map((s) => `${kindOf(s, checker).padEnd(9)} ${s.getName()}${isDeprecated(s, checker) ? ' (deprecated)' : ''}`)
      .sort((a, b) => a.slice(10).localeCompare(b.slice(10)));
    const name = entry === '.' ? 'index' : entry.slice(2).replaceAll('/', '-');
    reports.set(
      `${name}.api.md`,
      `# API report: \`nest-resilience${entry === '.' ? '' : entry.slice(1)}\`\n\n` +
        `Generated from \`${source}\` by test/package/api-report.spec.ts (\`UPDATE_API_REPORT=1\` rewrites it).\n\n` +
        '```\n' +
        lines.join('\n') +
        '\n```\n',
    );
  }
  return reports;
}
