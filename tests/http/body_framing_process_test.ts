/**
 * Every POST route of the real program, over raw sockets, against bodies of
 * every size around every power of two up to the body limit and around the
 * limit itself, each framed by `Content-Length`, chunked in one piece and
 * chunked in many random pieces (1-byte chunks included), written to the
 * socket at once or in random bursts. The program runs with a 30 s body
 * deadline, so a body that is read only when the deadline fires is
 * unmistakable: each answer must come within a few seconds. A random quarter
 * of the requests ask for `Connection: close`, and the program must then
 * close the connection once it has answered a body it read, whatever its
 * framing.
 *
 * The splits are random; a failure names its seed, and `BODY_SEED=<seed>`
 * replays it.
 */
import assert from "node:assert/strict";
import { type RunningServer, startServer } from "../_support/program.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The program's body deadline: far above any answer that is read at once. */
const BODY_TIMEOUT_MS = 30_000;
/** How long one answer may take on a busy machine before it counts as waiting for the deadline. */
const ANSWER_WITHIN_MS = 8_000;

const seed = Number(Deno.env.get("BODY_SEED") ?? Date.now() % 1_000_000_007);

/** A small seeded generator (mulberry32), so a failing run can be replayed. */
function randomFrom(start: number): () => number {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = randomFrom(seed);
const below = (n: number) => Math.floor(random() * n);

/** The sizes tried under a body limit of `limit` bytes. */
function sizesFor(limit: number, dense: number[] = []): number[] {
  const sizes = new Set<number>([limit - 1, limit, limit + 1, ...dense]);
  for (let power = 1; power <= limit; power *= 2) {
    for (let d = -4; d <= 4; d++) sizes.add(power + d);
  }
  return [...sizes].filter((n) => n >= 0 && n <= limit + 1).sort((a, b) =>
    a - b
  );
}

type Framing = "content-length" | "chunked, one piece" | "chunked, many pieces";
const FRAMINGS: Framing[] = [
  "content-length",
  "chunked, one piece",
  "chunked, many pieces",
];

/** Splits `size` bytes into random pieces: runs of 1-byte pieces, short ones and long ones. */
function randomPieces(size: number): number[] {
  const pieces: number[] = [];
  let left = size;
  // Bounded: at most 48 pieces, then the rest in one.
  while (left > 0 && pieces.length < 48) {
    const roll = random();
    const n = Math.min(
      left,
      roll < 0.4 ? 1 : roll < 0.7 ? 1 + below(16) : 1 + below(left),
    );
    pieces.push(n);
    left -= n;
  }
  if (left > 0) pieces.push(left);
  return pieces;
}

/** The request's bytes as the socket writes that carry them. */
function framed(
  path: string,
  headers: Record<string, string>,
  body: Uint8Array,
  framing: Framing,
): Uint8Array[] {
  const head = (extra: string) =>
    encoder.encode(
      `POST ${path} HTTP/1.1\r\nHost: body.test\r\n${
        Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")
      }${extra}\r\n`,
    );
  if (framing === "content-length") {
    return [concat([head(`Content-Length: ${body.length}\r\n`), body])];
  }
  const sizes = framing === "chunked, one piece"
    ? (body.length > 0 ? [body.length] : [])
    : randomPieces(body.length);
  const parts: Uint8Array[] = [head("Transfer-Encoding: chunked\r\n")];
  let offset = 0;
  for (const n of sizes) {
    parts.push(
      encoder.encode(`${n.toString(16)}\r\n`),
      body.subarray(offset, offset + n),
      encoder.encode("\r\n"),
    );
    offset += n;
  }
  parts.push(encoder.encode("0\r\n\r\n"));
  if (framing === "chunked, one piece") return [concat(parts)];
  // Random bursts: consecutive parts joined into one write, so some chunks
  // arrive together and some alone.
  const writes: Uint8Array[] = [];
  for (let i = 0; i < parts.length;) {
    const take = 1 + below(6);
    writes.push(concat(parts.slice(i, i + take)));
    i += take;
  }
  return writes;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** One keep-alive connection that sends raw requests and reads answers framed by Content-Length. */
class RawConnection {
  #conn: Deno.TcpConn | undefined;
  #buffered: Uint8Array = new Uint8Array(0);
  constructor(readonly port: number) {}

  close(): void {
    try {
      this.#conn?.close();
    } catch {
      // Already closed by the server.
    }
    this.#conn = undefined;
    this.#buffered = new Uint8Array(0);
  }

  async #read(): Promise<boolean> {
    const chunk = new Uint8Array(16_384);
    const n = await this.#conn!.read(chunk);
    if (n === null) return false;
    this.#buffered = concat([this.#buffered, chunk.subarray(0, n)]);
    return true;
  }

  /**
   * Sends `writes` (pausing between some of them) and reads the answer, or
   * throws after `ANSWER_WITHIN_MS`. When `closing`, the request asked for
   * `Connection: close`: the server must then also close the connection
   * within that time.
   */
  async exchange(
    writes: Uint8Array[],
    label: string,
    closing = false,
  ): Promise<RawAnswer> {
    this.#conn ??= await Deno.connect({
      hostname: "127.0.0.1",
      port: this.port,
    });
    const conn = this.#conn;
    let timedOut = false;
    let answered = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.close();
    }, ANSWER_WITHIN_MS);
    try {
      const sent = (async () => {
        for (const [i, write] of writes.entries()) {
          if (i > 0 && random() < 0.3) {
            await new Promise((resolve) => setTimeout(resolve, below(3)));
          }
          let done = 0;
          while (done < write.length) {
            done += await conn.write(write.subarray(done));
          }
        }
      })().catch(() => {
        // The server may answer (413) and close before the body is sent.
      });
      const answer = await this.#readAnswer();
      await sent;
      answered = true;
      // A body refused mid-way (413) is left unread, and Deno 2.9 then holds
      // the connection however the client asked; plain `Deno.serve` does
      // the same. The client is told `connection: close`.
      if (closing && answer.status !== 413) {
        // Bounded by the timer, which closes the connection itself.
        while (await this.#read()) {
          assert.fail(`${label}: bytes after the answer`);
        }
        this.close();
      }
      if (answer.headers.get("connection") === "close") this.close();
      return answer;
    } catch (error) {
      this.close();
      if (timedOut) {
        throw new Error(
          `${label}: ${
            answered ? "connection not closed" : "no answer"
          } within ${ANSWER_WITHIN_MS} ms (seed ${seed})`,
        );
      }
      throw new Error(`${label}: ${error} (seed ${seed})`);
    } finally {
      clearTimeout(timer);
    }
  }

  async #readAnswer(): Promise<RawAnswer> {
    let end: number;
    for (;;) {
      end = findHeadEnd(this.#buffered);
      if (end >= 0) break;
      if (!(await this.#read())) throw new Error("closed before an answer");
    }
    const [statusLine = "", ...headerLines] = decoder.decode(
      this.#buffered.subarray(0, end),
    ).split("\r\n");
    const status = Number(statusLine.split(" ")[1]);
    const headers = new Map(
      headerLines.map((line) => {
        const colon = line.indexOf(":");
        return [
          line.slice(0, colon).trim().toLowerCase(),
          line.slice(colon + 1).trim(),
        ];
      }),
    );
    const length = Number(headers.get("content-length") ?? NaN);
    assert.ok(
      Number.isSafeInteger(length),
      `answer without a length: ${statusLine}`,
    );
    while (this.#buffered.length < end + 4 + length) {
      if (!(await this.#read())) throw new Error("closed mid-answer");
    }
    const body = decoder.decode(
      this.#buffered.subarray(end + 4, end + 4 + length),
    );
    this.#buffered = this.#buffered.slice(end + 4 + length);
    return { status, headers, body };
  }
}

function findHeadEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (
      bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 &&
      bytes[i + 3] === 10
    ) return i;
  }
  return -1;
}

/** A POST route: the body it is sent at a size, and the status that body earns under the limit. */
interface Route {
  path: string;
  headers: Record<string, string>;
  body(size: number): Uint8Array;
  status(size: number): number;
  /** Checks a 200 answer against the body sent. */
  check?(answer: RawAnswer, body: Uint8Array): void;
}

const ALPHABET =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function routes(token: string): Route[] {
  let names = 0;
  return [
    {
      path: "/quote",
      headers: {},
      body: (n) =>
        encoder.encode(n < 2 ? "A".repeat(n) : `A${"a".repeat(n - 2)}.`),
      status: (n) => n >= 2 ? 200 : 400,
    },
    {
      path: "/users",
      headers: {},
      // A name of exactly `n` characters that no earlier case used.
      body: (n) => {
        let name = "";
        for (let i = names++, left = n; left > 0; left--) {
          name += ALPHABET[i % ALPHABET.length];
          i = Math.floor(i / ALPHABET.length);
        }
        return encoder.encode(name);
      },
      status: (n) => n >= 1 && n <= 64 ? 200 : 400,
      check(answer, body) {
        const sent = decoder.decode(body);
        assert.equal(JSON.parse(answer.body).token.split("-")[0], sent);
      },
    },
    {
      path: "/",
      headers: { "X-Messaging-Token": token },
      // The shortest message is {"text":""}, 11 bytes; shorter is not JSON.
      body: (n) =>
        encoder.encode(
          n < 11 ? "x".repeat(n) : `{"text":"${"m".repeat(n - 11)}"}`,
        ),
      status: (n) => n >= 11 ? 200 : 400,
    },
  ];
}

async function register(server: RunningServer): Promise<string> {
  const res = await fetch(`${server.url}users`, {
    method: "POST",
    body: "framing_writer",
  });
  assert.equal(res.status, 200);
  return (await res.json()).token;
}

/** Runs every case under `limit` and returns how many ran. */
async function everyCase(limit: number, dense: number[] = []): Promise<number> {
  const server = await startServer([
    "--quiet",
    `--body-timeout-ms=${BODY_TIMEOUT_MS}`,
    `--max-body-bytes=${limit}`,
    "--history=5",
  ]);
  let cases = 0;
  const connection = new RawConnection(Number(new URL(server.url).port));
  try {
    const token = await register(server);
    for (const route of routes(token)) {
      for (const size of sizesFor(limit, dense)) {
        for (const framing of FRAMINGS) {
          const body = route.body(size);
          assert.equal(body.length, size);
          const closing = random() < 0.25;
          const label = `POST ${route.path}, ${size} bytes, ${framing}${
            closing ? ", Connection: close" : ""
          }, limit ${limit}`;
          const answer = await connection.exchange(
            framed(
              route.path,
              closing
                ? { ...route.headers, Connection: "close" }
                : route.headers,
              body,
              framing,
            ),
            label,
            closing,
          );
          const expected = size > limit ? 413 : route.status(size);
          assert.equal(answer.status, expected, `${label}: ${answer.body}`);
          if (expected === 413) {
            assert.match(answer.body, new RegExp(`limit of ${limit} bytes`));
          }
          if (expected === 200) route.check?.(answer, body);
          cases++;
        }
      }
    }
  } finally {
    connection.close();
    await server.stop();
  }
  assert.doesNotMatch(server.stderr(), /^\s+at /m, "no stack in the log");
  return cases;
}

Deno.test("every body size around every power of two and the limit is answered at once, whatever its framing", async () => {
  const cases = await everyCase(65_536);
  console.log(`${cases} cases at the default limit (seed ${seed})`);
});

Deno.test("a small limit, covered densely around it, answers at once and refuses past it with 413", async () => {
  const limit = 1000;
  const dense = Array.from({ length: 33 }, (_, i) => limit - 16 + i);
  const cases = await everyCase(limit, [
    ...dense,
    ...Array.from({ length: 70 }, (_, i) => i),
  ]);
  console.log(`${cases} cases at limit ${limit} (seed ${seed})`);
});

Deno.test("a client that half-closes after its whole body gets 200 and the write, or 400 and nothing", async () => {
  // Deno 2.9's HTTP/1.1 server may drop a body once the client's side closes
  // (plain `Deno.serve` too, docs/api.md#bodies-and-limits): a refusal is
  // allowed where the program cannot see the body, but never a half-done write.
  const server = await startServer(["--quiet", "--history=5"]);
  const port = Number(new URL(server.url).port);
  const outcomes = new Map<string, number>();
  try {
    let previous = await (await fetch(`${server.url}quote`)).text();
    let cases = 0;
    for (const size of [12, 100, 4095, 4096, 4097, 20_000, 65_536]) {
      for (const framing of FRAMINGS) {
        for (const gapMs of [0, 50]) {
          // A quote no earlier case sent, so that a write shows.
          const mark = (cases++).toString(26).replace(
            /./g,
            (digit) => String.fromCharCode(97 + parseInt(digit, 26)),
          );
          const body = encoder.encode(
            `B${mark}${"b".repeat(size - 2 - mark.length)}.`,
          );
          const label = `${size} bytes, ${framing}, ${gapMs} ms before body`;
          const all = concat(framed("/quote", {}, body, framing));
          const split = findHeadEnd(all) + 4;
          const conn = await Deno.connect({ hostname: "127.0.0.1", port });
          try {
            await conn.write(all.subarray(0, split));
            await new Promise((resolve) => setTimeout(resolve, gapMs));
            for (let done = split; done < all.length;) {
              done += await conn.write(all.subarray(done));
            }
            await conn.closeWrite();
            const answer = new TextDecoder().decode(
              await new Response(conn.readable).bytes(),
            );
            const status = Number(answer.split(" ")[1]);
            const quote = await (await fetch(`${server.url}quote`)).text();
            const sent = JSON.stringify(decoder.decode(body));
            if (status === 200) {
              assert.ok(quote.includes(sent), `${label}: 200 but not stored`);
              previous = quote;
            } else {
              assert.equal(status, 400, `${label}: ${answer}`);
              assert.match(answer, /Request body was cut short/, label);
              assert.equal(quote, previous, `${label}: refused but stored`);
            }
            outcomes.set(
              String(status),
              (outcomes.get(String(status)) ?? 0) + 1,
            );
          } finally {
            try {
              conn.close();
            } catch {
              // Closed by reading its readable to the end.
            }
          }
        }
      }
    }
  } finally {
    await server.stop();
  }
  console.log(
    `${
      [...outcomes.values()].reduce((a, b) => a + b)
    } half-closed requests by status:`,
    Object.fromEntries(outcomes),
  );
  assert.doesNotMatch(server.stderr(), /^\s+at /m, "no stack in the log");
});

Deno.test("a whole declared body of 5 to 64 KiB sent with its head and then half-closed is stored and answered 200", async () => {
  // Deno 2.9 fails the read after the last byte once the client's side has
  // closed; the program no longer takes that for a body cut short. Sizes just
  // past 4 or 8 KiB may still lose their last bytes inside Deno (docs/api.md).
  const server = await startServer(["--quiet"]);
  const port = Number(new URL(server.url).port);
  try {
    for (const size of [5_000, 12_000, 20_000, 65_536]) {
      for (let i = 0; i < 5; i++) {
        const quote = `D${"d".repeat(size - 3)}${"abcde"[i]}.`.slice(-size);
        const body = encoder.encode(`D${quote.slice(1)}`);
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        const all = concat(framed("/quote", {}, body, "content-length"));
        for (let done = 0; done < all.length;) {
          done += await conn.write(all.subarray(done));
        }
        await conn.closeWrite();
        const answer = decoder.decode(
          await new Response(conn.readable).bytes(),
        );
        assert.match(
          answer,
          /^HTTP\/1.1 200 /,
          `${size} bytes, try ${i}: ${answer}`,
        );
        const stored = await (await fetch(`${server.url}quote`)).json();
        assert.equal(stored, decoder.decode(body), `${size} bytes, try ${i}`);
      }
    }
  } finally {
    await server.stop();
  }
});
