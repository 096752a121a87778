"""A third-party client of the messaging service, written with Python's
requests as a client author would: for each (name, way) in the plan it
registers, lists the users, posts, reads the newest message, unregisters
and tries the old credential again, printing what it saw as one JSON line.

The way is how the credential goes into X-Messaging-Token:
  as-is  the token as str: requests sends it as ISO-8859-1, which holds
         names up to U+00FF only (José, Zoë).
  utf8   the token's UTF-8 bytes: any name (Иван, 李雷, Bob🚀, Łukasz).

Usage: python3 requests_client.py BASE_URL PLAN_JSON
"""

import json
import sys

import requests

TIMEOUT = 10


def header(token, way):
    if way == "as-is":
        return token
    # bytes are sent as they are: the name arrives as UTF-8.
    return token.encode("utf-8")


def answer(response):
    try:
        body = response.json()
    except ValueError:
        body = response.text
    return [response.status_code, body]


def main():
    base, plan = sys.argv[1], json.loads(sys.argv[2])
    for name, way in plan:
        seen = {"name": name, "way": way}
        # A str body would go as ISO-8859-1: the name must travel as UTF-8.
        registered = requests.post(
            base + "users", data=name.encode("utf-8"), timeout=TIMEOUT
        )
        seen["register"] = answer(registered)
        # A refused name has no token: go on, so the test shows the refusal.
        token = seen["register"][1].get("token", "")
        auth = {"X-Messaging-Token": header(token, way)}
        seen["users"] = answer(
            requests.get(base + "users", headers=auth, timeout=TIMEOUT)
        )
        seen["post"] = answer(
            requests.post(
                base,
                json={"text": "hello from " + name},
                headers=auth,
                timeout=TIMEOUT,
            )
        )
        seen["messages"] = answer(requests.get(base, timeout=TIMEOUT))
        seen["unregister"] = answer(
            requests.delete(base + "users", headers=auth, timeout=TIMEOUT)
        )
        seen["after"] = answer(
            requests.get(base + "users", headers=auth, timeout=TIMEOUT)
        )
        print(json.dumps(seen, ensure_ascii=False), flush=True)


main()
