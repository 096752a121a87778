// A third-party client of the messaging service, written with Node's fetch
// as a client author would: for each [name, way] in the plan it registers,
// lists the users, posts, reads the newest message, unregisters and tries
// the old credential again, printing what it saw as one JSON line.
//
// The way is how the credential goes into X-Messaging-Token:
//   as-is  the token as a string: fetch sends each character as one byte
//          (ISO-8859-1) and throws for any above U+00FF: José, Zoë only.
//   utf8   the token's UTF-8 bytes, one character each: any name.
//
// Usage: node fetch_client.mjs BASE_URL PLAN_JSON

const TIMEOUT_MS = 10_000;
const [base, planJson] = process.argv.slice(2);

const header = (token, way) =>
  way === "as-is" ? token : Buffer.from(token, "utf8").toString("latin1");

async function answer(path, init = {}) {
  const res = await fetch(new URL(path, base), {
    ...init,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  try {
    return [res.status, JSON.parse(text)];
  } catch {
    return [res.status, text];
  }
}

for (const [name, way] of JSON.parse(planJson)) {
  const seen = { name, way };
  // A string body is sent as UTF-8.
  seen.register = await answer("users", { method: "POST", body: name });
  // A refused name has no token: go on, so the test shows the refusal.
  const token = seen.register[1].token ?? "";
  const headers = { "x-messaging-token": header(token, way) };
  seen.users = await answer("users", { headers });
  seen.post = await answer("", {
    method: "POST",
    headers,
    body: JSON.stringify({ text: `hello from ${name}` }),
  });
  seen.messages = await answer("");
  seen.unregister = await answer("users", { method: "DELETE", headers });
  seen.after = await answer("users", { headers });
  console.log(JSON.stringify(seen));
}
