/**
 * One connection to a Redis server held open by a test, speaking RESP
 * itself: unlike `redis-cli`, which connects anew for every command, it
 * still gets through once the server refuses new clients (`maxclients`).
 */

/** A reply, as RESP gives it: text, a number, null, or a list of replies. */
export type Reply = string | number | null | Reply[];

/** An open admin connection. */
export interface RedisAdmin {
  /** Sends one command and answers its reply; an error reply throws. */
  command(...args: string[]): Promise<Reply>;
  /** Closes the connection. */
  close(): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Connects to the server on `port` of the loopback. */
export async function connectAdmin(port: number): Promise<RedisAdmin> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let buffer = new Uint8Array(0);
  const fill = async () => {
    const chunk = new Uint8Array(65_536);
    const n = await conn.read(chunk);
    if (n === null) throw new Error("the admin connection was closed");
    const next = new Uint8Array(buffer.length + n);
    next.set(buffer);
    next.set(chunk.subarray(0, n), buffer.length);
    buffer = next;
  };
  const line = async (): Promise<string> => {
    for (let tries = 0; tries < 10_000; tries++) {
      const end = buffer.indexOf(10);
      if (end > 0 && buffer[end - 1] === 13) {
        const text = decoder.decode(buffer.subarray(0, end - 1));
        buffer = buffer.subarray(end + 1);
        return text;
      }
      await fill();
    }
    throw new Error("no line in the reply");
  };
  const bytes = async (count: number): Promise<string> => {
    for (let tries = 0; buffer.length < count + 2 && tries < 10_000; tries++) {
      await fill();
    }
    const text = decoder.decode(buffer.subarray(0, count));
    buffer = buffer.subarray(count + 2);
    return text;
  };
  const reply = async (): Promise<Reply> => {
    const head = await line();
    const rest = head.slice(1);
    switch (head[0]) {
      case "+":
        return rest;
      case "-":
        throw new Error(`Redis answered: ${rest}`);
      case ":":
        return Number(rest);
      case "$":
        return rest === "-1" ? null : await bytes(Number(rest));
      case "*": {
        if (rest === "-1") return null;
        const items: Reply[] = [];
        for (let i = 0; i < Number(rest); i++) items.push(await reply());
        return items;
      }
    }
    throw new Error(`not a RESP reply: ${head}`);
  };
  let queue = Promise.resolve<unknown>(undefined);
  return {
    command(...args) {
      const request = `*${args.length}\r\n` +
        args.map((arg) => `$${encoder.encode(arg).length}\r\n${arg}\r\n`)
          .join("");
      const answer = queue.then(async () => {
        const data = encoder.encode(request);
        for (let sent = 0; sent < data.length;) {
          sent += await conn.write(data.subarray(sent));
        }
        return await reply();
      });
      queue = answer.catch(() => {});
      return answer;
    },
    close: () => conn.close(),
  };
}
