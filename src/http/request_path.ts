/**
 * The path of a request's target. Deno builds `req.url` as
 * `http://` + the Host header + the target, verbatim, so a Host header such
 * as `x/users?` would otherwise choose the route. The Host header is
 * skipped by its length instead of by searching for the first `/`.
 * @module
 */

/**
 * The path of `url` (without the query), where `host` is the request's Host
 * header: the part after `http://` + `host` when the URL starts so;
 * otherwise (an absolute-form target, or no Host header) the URL's own path.
 */
export function pathOf(url: string, host: string | null = null): string {
  const authority = url.indexOf("//") + 2;
  let start = -1;
  if (host) {
    if (url.startsWith(host, authority)) start = authority + host.length;
    else {
      // A Host header with bytes above 0x7F reaches us one character per
      // byte, while the URL holds them decoded as UTF-8.
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

/** The path starting at `start` in `url`, without the query. */
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

/**
 * The path of `req`'s target, never influenced by its Host header. The
 * headers are read only when the URL has more than one `/` after the
 * scheme's: the target starts with one, so with a single `/` the Host holds
 * none and cannot be mistaken for the path. Building the headers costs more
 * than the rest of a `GET /quote`.
 */
export function requestPath(req: Request): string {
  const url = req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start !== -1 && url.indexOf("/", start + 1) === -1) {
    return pathFrom(url, start);
  }
  return pathOf(url, req.headers.get("host"));
}
