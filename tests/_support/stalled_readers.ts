/**
 * Readers that ask for a stream and never read: raw sockets with a small
 * receive buffer, from one loopback source address, held by a Python
 * process (Deno's sockets cannot bind a source address nor shrink their
 * buffer) until told to close them.
 */

/** Stalled connections, open until {@linkcode StalledReaders.close}. */
export interface StalledReaders {
  /** Closes every connection from the client's side, unread bytes and all. */
  close(): Promise<void>;
}

/** What {@linkcode stallReaders} opens. */
export interface StallOptions {
  /** The server's loopback port. */
  port: number;
  /** The source address, 127.x.y.z. */
  address: string;
  /** The stream's path, such as `/events`. */
  path: string;
  count: number;
  /** Ask for a WebSocket instead of an event stream. */
  webSocket?: boolean;
}

const SCRIPT = `
import json, socket, sys
options = json.loads(sys.argv[1])
head = "GET %s HTTP/1.1\\r\\nHost: x\\r\\n" % options["path"]
if options["webSocket"]:
    head += ("Upgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\n"
             "Sec-WebSocket-Version: 13\\r\\n")
sockets = []
for _ in range(options["count"]):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((options["address"], 0))
    s.connect(("127.0.0.1", options["port"]))
    s.sendall((head + "\\r\\n").encode())
    sockets.append(s)
print("open", flush=True)
sys.stdin.readline()
for s in sockets:
    s.close()
print("closed", flush=True)
`;

/** Opens `count` connections that ask for the stream and then read nothing. */
export async function stallReaders(
  options: StallOptions,
): Promise<StalledReaders> {
  const child = new Deno.Command("python3", {
    args: ["-c", SCRIPT, JSON.stringify({ webSocket: false, ...options })],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const said = async (word: string) => {
    let text = "";
    // Each read brings at least one byte; the two words are short.
    for (let i = 0; i < 100 && !text.includes(word); i++) {
      const { done, value } = await lines.read();
      if (done) break;
      text += value;
    }
    if (!text.includes(word)) throw new Error(`no "${word}": ${text}`);
  };
  await said("open");
  return {
    async close() {
      const stdin = child.stdin.getWriter();
      await stdin.write(new TextEncoder().encode("close\n"));
      await stdin.close();
      await said("closed");
      // Read to the end, so that Python never writes to a closed pipe.
      for (let i = 0; i < 100 && !(await lines.read()).done; i++);
      await child.status;
    },
  };
}
