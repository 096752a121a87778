/**
 * Fails when the project's own modules import each other in a cycle (static
 * or dynamic imports alike), or when a folder of `src/` imports a folder
 * above it in {@link LAYERS}: folders point one way, lowest first. The folder
 * graph lives in `docs/architecture.md` between `<!-- folders -->` and
 * `<!-- /folders -->`. Run by `deno task check`.
 * @module
 */

import { denoJson, LIBRARY_ENTRIES, PROGRAM_ENTRIES } from "./entries.ts";

/** The folders of `src/`, lowest first: each imports only those before it. */
export const LAYERS = [
  "identity",
  "timers",
  "limits",
  "http",
  "client",
  "store",
  "store/redis",
  "auth",
  "presence",
  "streams",
  "operations",
  "web",
  "chat",
  "services",
  "openapi",
  "program",
];

interface Dependency {
  code?: { specifier: string };
  type?: { specifier: string };
}
interface ModuleInfo {
  specifier: string;
  dependencies?: Dependency[];
}

const root = new URL("../", import.meta.url).href;
const ours = (specifier: string) =>
  specifier.startsWith(root) && !specifier.includes("/node_modules/");
const short = (s: string) => s.slice(root.length);

/** The project's import graph: module to the modules it imports. */
async function graphOf(entries: string[]): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const entry of entries) {
    const info = await denoJson(["info", "--json", entry]) as {
      modules: ModuleInfo[];
    };
    for (const module of info.modules) {
      if (!ours(module.specifier) || graph.has(module.specifier)) continue;
      const targets = (module.dependencies ?? [])
        .flatMap((d) => [d.code?.specifier, d.type?.specifier])
        .filter((s): s is string => s !== undefined && ours(s));
      graph.set(module.specifier, [...new Set(targets)]);
    }
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the path that closes it. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") {
        cycles.push([...path.slice(path.indexOf(next)), next]);
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

/** The `src/` folder a module lives in, or undefined outside `src/`. */
function folderOf(specifier: string): string | undefined {
  const path = short(specifier);
  const end = path.lastIndexOf("/");
  if (!path.startsWith("src/") || end < "src/".length) return undefined;
  // Text imported as data (`.lua`, `.html`) belongs to the folder that reads it.
  if (!/\.(ts|js)$/.test(path)) return undefined;
  return path.slice("src/".length, end);
}

/** Folder to the folders it imports, each with one import that shows it. */
function foldersOf(graph: Map<string, string[]>) {
  const folders = new Map<string, Map<string, string>>();
  for (const [from, targets] of graph) {
    const a = folderOf(from);
    if (a === undefined) continue;
    if (!folders.has(a)) folders.set(a, new Map());
    for (const to of targets) {
      const b = folderOf(to);
      if (b === undefined || b === a) continue;
      folders.get(a)!.set(b, `${short(from)} -> ${short(to)}`);
    }
  }
  return folders;
}

/** Each import of a folder that is not below the importer in `LAYERS`. */
function upwardImports(folders: Map<string, Map<string, string>>): string[] {
  const problems: string[] = [];
  for (const [from, targets] of folders) {
    const rank = LAYERS.indexOf(from);
    if (rank < 0) problems.push(`folder src/${from} has no place in LAYERS`);
    for (const [to, example] of targets) {
      if (LAYERS.indexOf(to) >= rank && rank >= 0) {
        problems.push(
          `folder src/${from} imports src/${to} above it: ${example}`,
        );
      }
    }
  }
  return problems;
}

/** The folder graph as Markdown: each folder, lowest first, and what it imports. */
function graphMarkdown(folders: Map<string, Map<string, string>>): string {
  const rows = LAYERS.filter((f) => folders.has(f)).map((f) => {
    const uses = [...folders.get(f)!.keys()]
      .sort((a, b) => LAYERS.indexOf(b) - LAYERS.indexOf(a))
      .map((u) => `\`${u}\``).join(", ");
    return `| \`${f}\` | ${uses || "(nothing of ours)"} |`;
  });
  return ["| folder | imports |", "| --- | --- |", ...rows].join("\n");
}

if (import.meta.main) {
  const graph = await graphOf([...LIBRARY_ENTRIES, ...PROGRAM_ENTRIES]);
  const folders = foldersOf(graph);
  const problems = [
    ...cyclesOf(graph).map((c) => `import cycle: ${c.map(short).join(" -> ")}`),
    ...upwardImports(folders),
  ];
  // `--docs=FILE` checks the folder graph marked in FILE; with `--write`
  // the graph is written there instead.
  const docs = Deno.args.find((a) => a.startsWith("--docs="));
  if (docs) {
    const file = docs.slice("--docs=".length);
    const page = await Deno.readTextFile(file);
    const current = page.replace(
      /(<!-- folders -->)[^]*?(<!-- \/folders -->)/,
      (_, start, end) => `${start}\n\n${graphMarkdown(folders)}\n\n${end}`,
    );
    // deno fmt pads the table's columns; compare what the cells say.
    const cells = (text: string) =>
      text.replace(/ +/g, " ").replace(/-{3,}/g, "---");
    if (Deno.args.includes("--write")) await Deno.writeTextFile(file, current);
    else if (cells(current) !== cells(page)) {
      problems.push(`${file}: the folder graph is not current (--write)`);
    }
  }
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) Deno.exit(1);
  console.log(
    `no import cycles among ${graph.size} modules; ${folders.size} folders point one way`,
  );
}
