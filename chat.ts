/**
 * `deno task chat`: a terminal chat over the messaging service.
 *
 * In a terminal it draws the 5 newest messages above the line being typed,
 * red ones in red, and redraws them as they arrive on the service's event
 * stream (a WebSocket authenticated as the chat's user, so it is online
 * while the chat runs); over a pipe it reads one line per message or command and writes
 * each new message as one line, for scripts. Commands: `/red`, `/black`, `/users`, `/help`, `/quit` (also
 * Ctrl-C and Ctrl-D), which unregisters before it exits. Who comes online,
 * goes offline or leaves is told as it happens.
 * @module
 */

import { parseArgs } from "node:util";
import { flagArgs } from "./src/program/options.ts";
import { chat } from "./src/chat/session.ts";

const USAGE = `Usage: deno task chat [--url=URL] [--name=NAME]

  --url=URL    the messaging service (default: http://localhost:8000/)
  --name=NAME  the name to join with; asked for when absent or refused
  --help       show this help and exit

In the chat: /red and /black pick the color of what you send, /users lists
who is online (and who else is registered), /quit (or Ctrl-C, Ctrl-D)
leaves and unregisters. Others coming online, going offline or leaving are
told as it happens.

The exit status is 1 when a line read was not sent, or when input over a
pipe ended before the chat joined (the service unreachable, or no name
accepted), so that a script piping messages in learns they did not go.`;

if (import.meta.main) {
  let flags;
  try {
    ({ values: flags } = parseArgs({
      args: flagArgs(Deno.args),
      strict: true,
      options: {
        url: { type: "string", default: "http://localhost:8000/" },
        name: { type: "string" },
        help: { type: "boolean", default: false },
      },
    }));
    new URL(flags.url);
  } catch (error) {
    console.error(`error: ${(error as Error).message} (see --help)`);
    Deno.exit(2);
  }
  if (flags.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  Deno.exit(await chat(flags.url, flags.name));
}
