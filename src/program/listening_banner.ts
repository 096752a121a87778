/**
 * The first line the program prints, which scripts and tests wait for.
 * @module
 */

import {
  type ServiceSelection,
  servicesOf,
} from "../services/service_names.ts";

/** `Listening on http://HOST:PORT/ (services: ...)`, with the real bound port. */
export function listeningBanner(
  { hostname, port }: Deno.NetAddr,
  selection: ServiceSelection,
): string {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return `Listening on http://${host}:${port}/ (services: ${
    servicesOf(selection).join(", ")
  })`;
}
