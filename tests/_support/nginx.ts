/**
 * Debian's nginx in front of the real program, run with the shipped
 * `deploy/nginx.conf`. Only two values are rewritten: the port it listens on
 * (a free loopback port instead of 8080 on every address) and the program's
 * port (instead of 8000). Every other byte is the file users get, unless a
 * test asks for its commented TLS block to be taken in as a user would.
 * @module
 */

import { freePort, waitForPort } from "./program.ts";

/** The configuration users get. */
export const SHIPPED_NGINX_CONF = new URL(
  "../../deploy/nginx.conf",
  import.meta.url,
);

/** The path of nginx, or `undefined` when it is not installed. */
export function nginxPath(): string | undefined {
  // Debian puts it in /usr/sbin, which is not on every user's PATH.
  const dirs = ["/usr/sbin", ...(Deno.env.get("PATH") ?? "").split(":")];
  for (const dir of dirs) {
    try {
      if (Deno.statSync(`${dir}/nginx`).isFile) return `${dir}/nginx`;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}

/** Why the proxy tests cannot run here, or `undefined` when they can. */
export const nginxMissing = nginxPath() === undefined
  ? "nginx is not installed (apt-get install nginx)"
  : undefined;
if (nginxMissing) {
  console.warn(`\n!!! SKIPPING every nginx test: ${nginxMissing} !!!\n`);
}

/** Replaces the one line `pattern` matches in `text`, or throws. */
function replaceOnce(text: string, pattern: RegExp, by: string): string {
  const found = text.match(new RegExp(pattern, "gm"))?.length ?? 0;
  if (found !== 1) {
    throw new Error(`deploy/nginx.conf has ${found} lines like ${pattern}`);
  }
  return text.replace(new RegExp(pattern, "m"), by);
}

/**
 * The shipped configuration listening on 127.0.0.1:`listenPort` and proxying
 * 127.0.0.1:`upstreamPort`; throws when it no longer has exactly one active
 * `listen 8080` and one `server 127.0.0.1:8000`.
 */
export function proxyConfig(
  shipped: string,
  listenPort: number,
  upstreamPort: number,
): string {
  const listening = replaceOnce(
    shipped,
    /^(\s*)listen 8080 /,
    `$1listen 127.0.0.1:${listenPort} `,
  );
  return replaceOnce(
    listening,
    /^(\s*)server 127\.0\.0\.1:8000;/,
    `$1server 127.0.0.1:${upstreamPort};`,
  );
}

/**
 * `config` with its commented TLS block taken in, as a user would: every
 * directive in it uncommented, listening on 127.0.0.1:`port`, with the
 * certificate and key at `cert` and `key`; throws when the block is gone.
 */
export function withTls(
  config: string,
  port: number,
  cert: string,
  key: string,
): string {
  const start = config.indexOf("# --- TLS:");
  const end = config.indexOf("\n\n", start);
  if (start < 0 || end < 0) {
    throw new Error("deploy/nginx.conf has no TLS block");
  }
  let block = config.slice(start, end)
    .replace(/^(\s*)# ([a-z_0-9]+ [^\n]*;)$/gm, "$1$2");
  block = replaceOnce(
    block,
    /^(\s*)listen 443 /,
    `$1listen 127.0.0.1:${port} `,
  );
  block = replaceOnce(
    block,
    /^(\s*)ssl_certificate \S+;/,
    `$1ssl_certificate ${cert};`,
  );
  block = replaceOnce(
    block,
    /^(\s*)ssl_certificate_key \S+;/,
    `$1ssl_certificate_key ${key};`,
  );
  return config.slice(0, start) + block + config.slice(end);
}

/** The seconds a duration directive of the shipped file is set to, such as `keepalive_timeout`. */
export function shippedSeconds(directive: string): number {
  const text = Deno.readTextFileSync(SHIPPED_NGINX_CONF);
  const values = [
    ...text.matchAll(new RegExp(`^\\s*${directive}\\s+(\\d+)s;`, "gm")),
  ];
  const [only] = values;
  if (only === undefined || values.length > 1) {
    throw new Error(
      `deploy/nginx.conf sets ${directive} ${values.length} times`,
    );
  }
  return Number(only[1]);
}

/** A running nginx. */
export interface RunningProxy {
  /** Base URL, ending in `/`. */
  url: string;
  port: number;
  /** With TLS: its base URL (`https://127.0.0.1:PORT/`). */
  tlsUrl?: string;
  /** The master process; its workers are its children. */
  process: Deno.ChildProcess;
  /** Its error log so far. */
  errorLog(): string;
  /** Stops it (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/** Options of {@linkcode startProxy}. */
export interface ProxyOptions {
  /** Take in the TLS block with this certificate and key (PEM files). */
  tls?: { cert: string; key: string };
}

/**
 * Starts nginx in the foreground (`-g 'daemon off;'`, as docs/deploy.md
 * shows) in a fresh prefix directory, in front of 127.0.0.1:`upstreamPort`.
 */
export async function startProxy(
  upstreamPort: number,
  options: ProxyOptions = {},
): Promise<RunningProxy> {
  const bin = nginxPath();
  if (!bin) throw new Error(nginxMissing);
  const prefix = await Deno.makeTempDir({ prefix: "lms-nginx-" });
  // Started by root, nginx runs its workers as nobody: they must reach the
  // prefix to write temporary files there.
  await Deno.chmod(prefix, 0o755);
  await Deno.mkdir(`${prefix}/logs`);
  const port = freePort();
  const tlsPort = options.tls ? freePort() : undefined;
  const config = proxyConfig(
    await Deno.readTextFile(SHIPPED_NGINX_CONF),
    port,
    upstreamPort,
  );
  await Deno.writeTextFile(
    `${prefix}/nginx.conf`,
    options.tls
      ? withTls(config, tlsPort!, options.tls.cert, options.tls.key)
      : config,
  );
  const process = new Deno.Command(bin, {
    args: ["-p", `${prefix}/`, "-c", "nginx.conf", "-g", "daemon off;"],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // What nginx says before it has read its configuration goes to stderr.
  let stderr = "";
  const stderrDone = process.stderr.pipeThrough(new TextDecoderStream())
    .pipeTo(new WritableStream({ write: (chunk) => void (stderr += chunk) }));
  const errorLog = () => {
    try {
      return stderr + Deno.readTextFileSync(`${prefix}/logs/error.log`);
    } catch {
      return stderr;
    }
  };
  const kill = () => {
    try {
      process.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  };
  globalThis.addEventListener("unload", kill);
  const stop = async () => {
    try {
      process.kill("SIGTERM");
    } catch {
      // Already gone.
    }
    const timer = setTimeout(kill, 5000);
    await process.status;
    await stderrDone;
    clearTimeout(timer);
    globalThis.removeEventListener("unload", kill);
    await Deno.remove(prefix, { recursive: true });
  };
  try {
    await waitForPort(port, "nginx");
  } catch (error) {
    const log = errorLog();
    await stop();
    throw new Error(`${(error as Error).message}: ${log}`);
  }
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    tlsUrl: tlsPort ? `https://127.0.0.1:${tlsPort}/` : undefined,
    process,
    errorLog,
    stop,
  };
}
