/**
 * Fails when the project's own modules import each other in a cycle, static
 * or dynamic imports alike: layers must point one way. Run by
 * `deno task check`.
 * @module
 */

import { denoJson, LIBRARY_ENTRIES, PROGRAM_ENTRIES } from "./entries.ts";

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

const graph = await graphOf([...LIBRARY_ENTRIES, ...PROGRAM_ENTRIES]);
const cycles = cyclesOf(graph);
const short = (s: string) => s.slice(root.length);
if (cycles.length > 0) {
  for (const cycle of cycles) {
    console.error(`import cycle: ${cycle.map(short).join(" -> ")}`);
  }
  Deno.exit(1);
}
console.log(`no import cycles among ${graph.size} modules`);
