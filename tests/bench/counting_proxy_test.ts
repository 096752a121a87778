import assert from "node:assert/strict";
import {
  type CountingProxy,
  countingProxy,
} from "../../bench/counting_proxy.ts";

/** A server on loopback that sends `size` bytes to each connection, then closes it. */
function sendingServer(size: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    const conn = await listener.accept();
    await conn.write(new Uint8Array(size).fill(7));
    conn.close();
  })();
  return { port: (listener.addr as Deno.NetAddr).port, listener, served };
}

/** Everything `conn` receives until it is closed, at most `max` bytes. */
async function readAll(conn: Deno.Conn, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const buffer = new Uint8Array(16_384);
  while (length <= max) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
    length += n;
  }
  const all = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return all;
}

/** Sends `head` to `proxy`, and reads all it answers until it closes. */
async function askProxy(
  proxy: CountingProxy,
  head: string,
  max: number,
): Promise<Uint8Array> {
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(new URL(proxy.url).port),
  });
  try {
    await conn.write(new TextEncoder().encode(head));
    return await readAll(conn, max);
  } finally {
    conn.close();
  }
}

Deno.test("the proxy tunnels a CONNECT and counts every byte the server sends, by host", async () => {
  const size = 100_000;
  const server = sendingServer(size);
  const proxy = countingProxy();
  try {
    const received = await askProxy(
      proxy,
      `CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      2 * size,
    );
    const head = "HTTP/1.1 200 Connection Established\r\n\r\n";
    assert.equal(
      new TextDecoder().decode(received.subarray(0, head.length)),
      head,
    );
    assert.equal(received.length - head.length, size);
    await server.served;
    assert.deepEqual(proxy.received(), {
      total: size,
      byHost: new Map([["127.0.0.1", size]]),
    });
  } finally {
    proxy.close();
    server.listener.close();
  }
});

Deno.test("a request that is not CONNECT is closed, and nothing is counted", async () => {
  const proxy = countingProxy();
  try {
    const received = await askProxy(
      proxy,
      "GET http://example.test/ HTTP/1.1\r\n\r\n",
      1000,
    );
    assert.equal(received.length, 0);
    assert.equal(proxy.received().total, 0);
  } finally {
    proxy.close();
  }
});
