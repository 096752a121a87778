/**
 * Summarizes a V8 CPU profile (`deno run --cpu-prof`): the functions with the
 * most time of their own, then with the most time including their callees.
 *
 * ```sh
 * deno run --allow-read tools/cpu_profile_top.ts PROFILE.cpuprofile [COUNT] [REQUESTS]
 * ```
 *
 * With REQUESTS (how many requests the profiled process served), each line
 * also gives its time in microseconds per request, so two servers profiled
 * under the same load can be compared item by item.
 * @module
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, countArg = "30", requestsArg] = Deno.args;
if (!file) {
  console.error(
    "usage: tools/cpu_profile_top.ts PROFILE.cpuprofile [COUNT] [REQUESTS]",
  );
  Deno.exit(2);
}
const count = Number(countArg);
const requests = requestsArg === undefined ? undefined : Number(requestsArg);
const profile: Profile = JSON.parse(await Deno.readTextFile(file));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) {
  for (const child of node.children ?? []) parent.set(child, node.id);
}
const nameOf = (id: number) => {
  const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
  const where = url.split("/").slice(-2).join("/");
  return `${functionName || "(anonymous)"} ${where}:${lineNumber + 1}`;
};

const selfTime = new Map<number, number>();
profile.samples.forEach((id, i) =>
  selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
);
const total = [...selfTime.values()].reduce((a, b) => a + b, 0);
const own = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, time] of selfTime) {
  own.set(nameOf(id), (own.get(nameOf(id)) ?? 0) + time);
  // Each function once per sample, however deep it recurses.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = nameOf(at);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + time);
  }
}
const top = (times: Map<string, number>) =>
  [...times].sort((a, b) => b[1] - a[1]).slice(0, count).map(([name, t]) =>
    `${(100 * t / total).toFixed(1).padStart(5)}%${
      requests ? `${(t / requests).toFixed(2).padStart(7)} µs` : ""
    }  ${name}`
  ).join("\n");
console.log(
  `${(total / 1000).toFixed(0)} ms sampled${
    requests ? `, ${(total / requests).toFixed(2)} µs per request` : ""
  }\n\nself time:\n${top(own)}`,
);
console.log(`\nincluding callees:\n${top(inclusive)}`);
