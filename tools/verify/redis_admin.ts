/**
 * One Redis connection the checker holds open for its own commands. It is
 * opened before any fault and kept: when `maxclients` is lowered so that the
 * program's connections cannot come back, a new `redis-cli` would be refused
 * too, and nothing could restore the limit. Speaks RESP2 over a socket, so
 * what the checker sees of Redis does not go through the client library the
 * program under test uses.
 * @module
 */

/** A reply as RESP2 carries it. */
export type Reply = string | number | null | Reply[];

/** An error reply (`-ERR ...`). */
export class RedisReplyError extends Error {}

/**
 * A Redis connection for administration commands.
 *
 * @example Lowering maxclients
 * ```ts ignore
 * const admin = await RedisAdmin.connect(6379);
 * await admin.command("CONFIG", "SET", "maxclients", "3");
 * admin.close();
 * ```
 */
export class RedisAdmin {
  #conn: Deno.TcpConn;
  #buffer = new Uint8Array(0);
  #busy: Promise<unknown> = Promise.resolve();

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  /** Connects to the Redis server on loopback port `port`. */
  static async connect(port: number): Promise<RedisAdmin> {
    return new RedisAdmin(
      await Deno.connect({ hostname: "127.0.0.1", port }),
    );
  }

  /** Sends one command and returns its reply; fails after `timeoutMs`. */
  command(...args: string[]): Promise<Reply> {
    const run = this.#busy.then(() => this.#roundTrip(args));
    this.#busy = run.catch(() => {});
    return run;
  }

  /** A field of `INFO`, as a number. */
  async info(section: string, field: string): Promise<number> {
    const text = String(await this.command("INFO", section));
    const match = text.match(new RegExp(`^${field}:(\\d+)`, "m"));
    if (!match) throw new Error(`INFO ${section} has no ${field}`);
    return Number(match[1]);
  }

  /** Closes the connection. */
  close(): void {
    try {
      this.#conn.close();
    } catch {
      // Already closed by the server.
    }
  }

  async #roundTrip(args: string[], timeoutMs = 5000): Promise<Reply> {
    const encoder = new TextEncoder();
    const parts = [`*${args.length}\r\n`];
    for (const arg of args) {
      parts.push(`$${encoder.encode(arg).length}\r\n${arg}\r\n`);
    }
    await this.#conn.write(encoder.encode(parts.join("")));
    const timer = setTimeout(() => this.close(), timeoutMs);
    try {
      const reply = await this.#reply();
      if (reply instanceof RedisReplyError) throw reply;
      return reply;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads one reply; an error reply is returned, not thrown, so arrays can hold one. */
  async #reply(): Promise<Reply | RedisReplyError> {
    const line = await this.#line();
    const rest = line.slice(1);
    switch (line[0]) {
      case "+":
        return rest;
      case "-":
        return new RedisReplyError(rest);
      case ":":
        return Number(rest);
      case "$": {
        const length = Number(rest);
        if (length < 0) return null;
        const bytes = await this.#take(length + 2);
        return new TextDecoder().decode(bytes.subarray(0, length));
      }
      case "*": {
        const count = Number(rest);
        if (count < 0) return null;
        const items: Reply[] = [];
        for (let i = 0; i < count; i++) {
          const item = await this.#reply();
          items.push(item instanceof RedisReplyError ? item.message : item);
        }
        return items;
      }
      default:
        throw new Error(`unexpected reply from Redis: ${line}`);
    }
  }

  async #line(): Promise<string> {
    for (let reads = 0; reads < 100_000; reads++) {
      const end = this.#buffer.findIndex((b, i) =>
        b === 13 && this.#buffer[i + 1] === 10
      );
      if (end >= 0) {
        const line = new TextDecoder().decode(this.#buffer.subarray(0, end));
        this.#buffer = this.#buffer.subarray(end + 2);
        return line;
      }
      await this.#fill();
    }
    throw new Error("Redis sent an endless line");
  }

  async #take(count: number): Promise<Uint8Array> {
    for (let reads = 0; this.#buffer.length < count; reads++) {
      if (reads > 100_000) throw new Error("Redis sent an endless reply");
      await this.#fill();
    }
    const bytes = this.#buffer.subarray(0, count);
    this.#buffer = this.#buffer.subarray(count);
    return bytes;
  }

  async #fill(): Promise<void> {
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.#conn.read(chunk);
    if (n === null) throw new Error("Redis closed the admin connection");
    const joined = new Uint8Array(this.#buffer.length + n);
    joined.set(this.#buffer);
    joined.set(chunk.subarray(0, n), this.#buffer.length);
    this.#buffer = joined;
  }
}
