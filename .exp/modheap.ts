// deno-lint-ignore no-explicit-any
const gc = (globalThis as any).gc as () => void;
const used = () => { gc(); gc(); return Deno.memoryUsage().heapUsed; };
const rss = () => Deno.memoryUsage().rss;
let h = used(), r = rss();
for (const m of Deno.args) {
  await import(m);
  const h2 = used(), r2 = rss();
  console.log(m.padEnd(40), "heap +", ((h2 - h) / 1e6).toFixed(2), "MB  rss +", ((r2 - r) / 1e6).toFixed(2));
  h = h2; r = r2;
}
