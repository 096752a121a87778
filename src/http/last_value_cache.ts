/**
 * A one-entry memo: hot reads re-encode their body only when the state changed.
 * @module
 */

export function lastValueCache<K, V>(fn: (key: K) => V): (key: K) => V {
  let last: { key: K; value: V } | undefined;
  return (key) => {
    if (last === undefined || last.key !== key) last = { key, value: fn(key) };
    return last.value;
  };
}
