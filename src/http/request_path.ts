/**
 * The path of a request's target: Deno builds `req.url` from the Host header, so `Host: x/users?`
 * would otherwise choose the route (docs/architecture.md, "Router and responses").
 * @module
 */

/** Skips `http://` + `host` by its length; an absolute-form target keeps the URL's own path. */
export function pathOf(url: string, host: string | null = null): string {
  const authority = url.indexOf("//") + 2;
  let start = -1;
  if (host) {
    if (url.startsWith(host, authority)) start = authority + host.length;
    else {
      // Host bytes above 0x7F arrive one character per byte; the URL holds them as UTF-8.
      const decoded = utf8FromLatin1(host);
      if (decoded !== null && url.startsWith(decoded, authority)) {
        start = authority + decoded.length;
      }
    }
  }
  if (start === -1) start = url.indexOf("/", authority);
  if (start === -1 || url.charCodeAt(start) !== 0x2f) return "/";
  return pathFrom(url, start);
}

function pathFrom(url: string, start: number): string {
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function utf8FromLatin1(text: string): string | null {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0xff) return null;
    bytes[i] = code;
  }
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Kept per request: once Deno upgrades it to a WebSocket, reading its headers throws. */
const pathsOfHeaders = new WeakMap<Request, string>();

/** Reads the headers (costlier than the rest of a `GET /quote`) only when the URL has a second `/`. */
export function requestPath(req: Request): string {
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start !== -1 && url.indexOf("/", start + 1) === -1) {
    return pathFrom(url, start);
  }
  let path = pathsOfHeaders.get(req);
  if (path === undefined) {
    path = pathOf(url, req.headers.get("host"));
    pathsOfHeaders.set(req, path);
  }
  return path;
}
