/**
 * What Deno's own building blocks cost, for the choices the code's comments
 * explain: a timer per wait or one for many (`src/timers/deadlines.ts`), a
 * `Response` of a string or of bytes (`src/http/response.ts`). Figures:
 * `bench/results/profiles/timers.md` and `responses.md`.
 * @module
 */

const body = JSON.stringify({ status: 404, message: "Not Found" });
const bytes = new TextEncoder().encode(body);
const headers = { "content-type": "application/json; charset=UTF-8" };

Deno.bench(
  "a timer set and cleared",
  { group: "timers", baseline: true },
  () => {
    clearTimeout(setTimeout(() => {}, 1000));
  },
);

const kept = setInterval(() => {}, 1000);
Deno.bench("a timer unref'd and ref'd again", { group: "timers" }, () => {
  Deno.unrefTimer(kept);
  Deno.refTimer(kept);
});
// The interval must not keep the bench process alive once it is done.
Deno.unrefTimer(kept);

Deno.bench(
  "a Response of a string",
  { group: "responses", baseline: true },
  () => {
    new Response(body, { status: 404, headers });
  },
);

Deno.bench("a Response of the same bytes", { group: "responses" }, () => {
  new Response(bytes, { status: 404, headers });
});
