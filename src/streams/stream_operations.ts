/**
 * The stream routes' OpenAPI operations: refusals, the WebSocket's frames and close codes.
 * @module
 */

import { CLOSE_CODES, REFUSALS } from "../http/catalogue.ts";
import type { Operation } from "../http/operation.ts";
import { EVENT_STREAM_CONTENT_TYPE } from "./event_stream_format.ts";

const closeCodes = Object.values(CLOSE_CODES)
  .map(({ code, when, then }) => `${code} ${when} (${then})`)
  .join("; ");

const WEBSOCKET =
  '\n\n**WebSocket.** With a WebSocket upgrade the same stream comes as a socket (same caps, counted with event streams; same catch-up and order), each event one text frame holding one JSON object: `{"event":"message","id":6,"data":<message>}`, `{"event":"gap","data":{"missed":K}}`, `{"event":"quote","data":<quote>}`, `{"event":"presence","data":{...}}`. The client may send one first frame `{"token":"<name>-<token>"}`. A browser upgrade from an origin that is neither the service\'s own nor allowed by `--cors-origin` is answered 403. Close codes: ' +
  `${closeCodes}. See docs/api.md.`;

export function streamOperation(
  operation: Pick<Operation, "operationId" | "summary" | "token"> & {
    description: string;
    example: string;
  },
): Operation {
  const { description, example, ...rest } = operation;
  return {
    ...rest,
    description: description + WEBSOCKET,
    parameters: [{
      name: "Last-Event-ID",
      in: "header",
      required: false,
      description: "The id of the last message the reader has.",
      schema: { type: "string" },
    }, {
      name: "lastEventId",
      in: "query",
      required: false,
      description:
        "Means what `Last-Event-ID` means, for clients that cannot send the header (a browser's first connection, any WebSocket); the header wins when both are sent.",
      schema: { type: "string" },
    }],
    answer: {
      description: "The stream; it stays open.",
      type: EVENT_STREAM_CONTENT_TYPE,
      schema: { type: "string" },
      example,
      headers: {
        "Cache-Control": { schema: { type: "string", const: "no-cache" } },
      },
    },
    refusals: [
      REFUSALS.notUpgrade,
      REFUSALS.webSocketsOff,
      REFUSALS.clientStreamsFull,
      REFUSALS.clientWebSocketsFull,
      REFUSALS.streamsFull,
      REFUSALS.notFollowing,
      REFUSALS.readersBehind,
    ],
    fixed: [403],
  };
}
