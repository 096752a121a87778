/**
 * Where the terminal chat reads what is typed and draws what is said: a
 * full-screen chat in a real terminal, or one line per message over a pipe.
 * @module
 */

import stringWidth from "string-width";
import type { Message } from "../client/client.ts";

const NOTICES_SHOWN = 3;

const ESC = "\x1b";
const RED = `${ESC}[31m`;
const RESET = `${ESC}[0m`;

/** Text from other people without control characters, so no escape sequences. */
export function printable(text: unknown): string {
  // deno-lint-ignore no-control-regex -- control characters are what it removes
  return String(text).replace(/[\x00-\x1f\x7f-\x9f]/g, "\uFFFD");
}

/** Where keystrokes or lines come from, and where the chat is drawn. */
export interface Terminal {
  /** The next line typed, or `null` when the user leaves (end of input, Ctrl-C, Ctrl-D). */
  readLine(): Promise<string | null>;
  /** Shows `message`, just stored, among the newest ones (`newest`, newest first). */
  showMessage(message: Message, newest: Message[]): void;
  /** Shows a page of older messages (`/more`), oldest first, until the next page. */
  showOlder(messages: Message[]): void;
  /** A command's answer, an error, the service's state. */
  notice(text: string): void;
  setPrompt(prompt: string): void;
  restore(): void;
}

const encoder = new TextEncoder();
/** Never throws: once the window closes (EIO) or the pipe breaks, leaving and unregistering go on. */
export const write = (text: string) => {
  try {
    Deno.stdout.writeSync(encoder.encode(text));
  } catch {
    // Nothing left to show it on.
  }
};

/** The next chunk of input; the end of it once the terminal is gone (EIO after the window closed). */
const readOrEnd = <T>(reader: ReadableStreamDefaultReader<T>) =>
  reader.read().catch((): ReadableStreamReadResult<T> => ({
    done: true,
    value: undefined,
  }));

/** Reads lines from a pipe and writes each new message once, as a line. */
export function pipeTerminal(): Terminal {
  const lines = Deno.stdin.readable
    .pipeThrough(new TextDecoderStream())
    .getReader();
  let pending = "";
  return {
    async readLine() {
      while (!pending.includes("\n")) {
        const { done, value } = await readOrEnd(lines);
        if (done) {
          const last = pending;
          pending = "";
          return last === "" ? null : last;
        }
        pending += value;
      }
      const at = pending.indexOf("\n");
      const line = pending.slice(0, at).replace(/\r$/, "");
      pending = pending.slice(at + 1);
      return line;
    },
    showMessage(m) {
      const color = m.color === "red" ? " (red)" : "";
      write(`${printable(m.user)}${color}: ${printable(m.text)}\n`);
    },
    showOlder(messages) {
      for (const m of messages) this.showMessage(m, []);
    },
    notice(text) {
      write(`* ${text}\n`);
    },
    setPrompt(prompt) {
      if (prompt.startsWith("Your name")) write(`${prompt}\n`);
    },
    restore() {},
  };
}

const graphemes = new Intl.Segmenter();

/** `line` cut to `columns` as the terminal shows it: whole clusters, by their width. */
function fit(line: string, columns: number): string {
  if (stringWidth(line) < columns) return line;
  let cut = "";
  for (const { segment } of graphemes.segment(line)) {
    if (stringWidth(cut + segment) > columns - 2) break;
    cut += segment;
  }
  return `${cut}…`;
}

interface Screen {
  title: string;
  /** Newest first. */
  messages: Message[];
  /** Oldest first. */
  notices: string[];
}

/** One row a line, so nothing pushes the title off; short terminals drop spacing, then the oldest. */
function screenLines(screen: Screen, columns: number, rows: number) {
  const shown = screen.messages.toReversed().map((m) => {
    const line = fit(`${printable(m.user)}: ${printable(m.text)}`, columns);
    return m.color === "red" ? `${RED}${line}${RESET}` : line;
  });
  const notices = screen.notices.map((line) => fit(line, columns));
  let spacing = 2;
  while (2 + spacing + shown.length + notices.length > rows) {
    if (spacing > 0) spacing--;
    else if (shown.length > 1) shown.shift();
    else if (notices.length > 0) notices.shift();
    else break;
  }
  return [
    fit(screen.title, columns),
    ...(spacing > 0 ? [""] : []),
    ...shown,
    ...(spacing > 1 ? [""] : []),
    ...notices,
  ];
}

/** The keys in `text`: escape sequences dropped, as there is no editing beyond backspace. */
function keysOf(text: string): string[] {
  // deno-lint-ignore no-control-regex -- escape sequences are what it drops
  return [...text.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1bO.|\x1b/g, "")];
}

/** `typed` without its last user-perceived character (👍🏽, é as e + accent). */
function withoutLast(typed: string): string {
  const clusters = [...graphemes.segment(typed)];
  return clusters.slice(0, -1).map((c) => c.segment).join("");
}

/** A full-screen chat in a real terminal, in raw mode. */
export class FullScreen implements Terminal {
  readonly #title: () => string;
  readonly #reader = Deno.stdin.readable.getReader();
  readonly #decoder = new TextDecoder();
  #typed = "";
  #prompt = "> ";
  #messages: Message[] = [];
  /** The page `/more` showed last, oldest first: drawn above the newest. */
  #older: Message[] = [];
  // The newest notices, so that one (/help) does not hide another (/users).
  #notices: string[] = [];
  #keys: string[] = [];

  constructor(title: () => string) {
    this.#title = title;
    Deno.stdin.setRaw(true);
    // The alternate screen keeps the user's scrollback as it was.
    write(`${ESC}[?1049h`);
    this.#draw();
    Deno.addSignalListener("SIGWINCH", this.#draw);
  }

  #draw = () => {
    let size;
    try {
      size = Deno.consoleSize();
    } catch {
      return; // The terminal is gone: nothing to draw on.
    }
    const { columns, rows } = size;
    const screen = {
      title: this.#title(),
      // Newest first, so the older page goes above and is cut first.
      messages: [...this.#messages, ...this.#older.toReversed()],
      notices: this.#notices,
    };
    const lines = screenLines(screen, columns, rows).join("\r\n");
    write(`${ESC}[H${ESC}[2J${lines}\r\n${this.#prompt}${this.#typed}`);
  };

  async readLine() {
    for (;;) {
      if (this.#keys.length === 0) {
        const { done, value } = await readOrEnd(this.#reader);
        if (done) return null;
        this.#keys = keysOf(this.#decoder.decode(value, { stream: true }));
      }
      const line = this.#press(this.#keys.shift()!);
      if (line !== undefined) return line;
    }
  }

  /** Handles one key: the line typed once Enter ends it, `null` once the user leaves. */
  #press(key: string): string | null | undefined {
    if (key === "\x03" || key === "\x04") return null;
    if (key === "\r" || key === "\n") {
      const line = this.#typed;
      this.#typed = "";
      this.#draw();
      return line;
    }
    if (key >= " " && key !== "\x7f") {
      this.#typed += key;
      write(key);
      return undefined;
    }
    // Backspace redraws, so wide characters leave no stale cells; Ctrl-U clears the line.
    if (key === "\x7f" || key === "\b") this.#typed = withoutLast(this.#typed);
    else if (key === "\x15") this.#typed = "";
    else return undefined;
    this.#draw();
    return undefined;
  }

  showMessage(_: Message, newest: Message[]) {
    this.#messages = newest;
    this.#draw();
  }

  showOlder(messages: Message[]) {
    this.#older = messages;
    this.#draw();
  }

  notice(text: string) {
    this.#notices = [...this.#notices, text].slice(-NOTICES_SHOWN);
    this.#draw();
  }

  setPrompt(prompt: string) {
    this.#prompt = prompt;
    this.#draw();
  }

  restore() {
    Deno.removeSignalListener("SIGWINCH", this.#draw);
    write(`${ESC}[?1049l`);
    try {
      Deno.stdin.setRaw(false);
    } catch {
      // Not a terminal any more: nothing to give back.
    }
  }
}
