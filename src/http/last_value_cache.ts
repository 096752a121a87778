/**
 * A one-entry memo for bodies built from state that rarely changes.
 * @module
 */

/**
 * Wraps `fn` so that a call with the same argument as the last one returns
 * the last result: hot reads re-encode their body only when the state changed.
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
