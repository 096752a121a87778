/**
 * A one-entry memo: hot reads re-encode their body only when the state changed.
 * @module
 */

export function lastValueCache<K, V>(fn: (key: K) => V): (key: K) => V {
  let lastKey: K | undefined;
  let lastValue: V | undefined;
  let primed = false;
  return (key) => {
    if (!primed || key !== lastKey) {
      lastValue = fn(key);
      lastKey = key;
      primed = true;
    }
    return lastValue as V;
  };
}
