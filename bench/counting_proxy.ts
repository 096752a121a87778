/**
 * A proxy for `HTTPS_PROXY` that counts the bytes servers send through
 * it: what a command downloads, as it crosses the network rather than as
 * it unpacks on disk. Used by `bench/cold_start.ts`.
 * @module
 */

/** An HTTPS proxy on loopback that counts what passes through it. */
export interface CountingProxy {
  /** `http://127.0.0.1:PORT`, for `HTTPS_PROXY`. */
  url: string;
  /** Bytes received from the servers so far, and per host. */
  received(): { total: number; byHost: Map<string, number> };
  close(): void;
}

/**
 * Starts a proxy that tunnels `CONNECT host:port` requests and counts the
 * bytes each server sends back, so a download is measured as it crosses
 * the network, not as it unpacks on disk.
 */
export function countingProxy(): CountingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const byHost = new Map<string, number>();
  const tunnels = new Set<Deno.Conn>();
  const tunnel = async (client: Deno.Conn) => {
    tunnels.add(client);
    let upstream: Deno.Conn | undefined;
    try {
      // The request head is small; read until its blank line, at most 8 KiB.
      const head = new Uint8Array(8192);
      let length = 0;
      let text = "";
      while (!text.includes("\r\n\r\n") && length < head.length) {
        const n = await client.read(head.subarray(length));
        if (n === null) return;
        length += n;
        text = new TextDecoder().decode(head.subarray(0, length));
      }
      const [, host, port] = text.match(/^CONNECT ([^\s:]+):(\d+) /) ?? [];
      if (host === undefined) return;
      upstream = await Deno.connect({ hostname: host, port: Number(port) });
      tunnels.add(upstream);
      await client.write(
        new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"),
      );
      const counted = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          byHost.set(host, (byHost.get(host) ?? 0) + chunk.length);
          controller.enqueue(chunk);
        },
      });
      await Promise.allSettled([
        client.readable.pipeTo(upstream.writable),
        upstream.readable.pipeThrough(counted).pipeTo(client.writable),
      ]);
    } catch {
      // A tunnel cut when its process is killed counts what it carried.
    } finally {
      for (const conn of [client, upstream]) {
        if (!conn) continue;
        tunnels.delete(conn);
        try {
          conn.close();
        } catch {
          // Already closed by its stream.
        }
      }
    }
  };
  (async () => {
    for await (const conn of listener) tunnel(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    received: () => ({
      total: [...byHost.values()].reduce((a, b) => a + b, 0),
      byHost: new Map(byHost),
    }),
    close() {
      listener.close();
      for (const conn of tunnels) {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
    },
  };
}
