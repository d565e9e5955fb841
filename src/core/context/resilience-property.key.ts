/**
 * A typed key for `ResilienceContext.properties`. Keys compare by their `key` string, so define each key
 * once (a module constant) and share it.
 *
 * ```ts
 * const TenantKey = new ResiliencePropertyKey<string>('tenant');
 * context.properties.set(TenantKey, 'acme');
 * const tenant = context.properties.get(TenantKey); // string | undefined
 * ```
 *
 * @publicApi
 */
export class ResiliencePropertyKey<T> {
  /** Never set: carries the value type for the compiler. */
  declare readonly __type?: T;

  /** @param key - The key's name: keys with the same name share one entry. */
  constructor(readonly key: string) {}

  /** The key's name, for logs. */
  toString(): string {
    return this.key;
  }
}

/** A typed property bag that travels with one execution through every strategy. @publicApi */
export class ResilienceProperties {
  private readonly map = new Map<string, unknown>();

  /** The value stored under `key`, or `undefined`. */
  get<T>(key: ResiliencePropertyKey<T>): T | undefined {
    return this.map.get(key.key) as T | undefined;
  }

  /** The value stored under `key`, or `defaultValue` when there is none. */
  getOrDefault<T>(key: ResiliencePropertyKey<T>, defaultValue: T): T {
    return this.map.has(key.key) ? (this.map.get(key.key) as T) : defaultValue;
  }

  /** Whether a value is stored under `key`. */
  has(key: ResiliencePropertyKey<unknown>): boolean {
    return this.map.has(key.key);
  }

  /** Stores `value` under `key`, replacing any previous value; returns the bag for chaining. */
  set<T>(key: ResiliencePropertyKey<T>, value: T): this {
    this.map.set(key.key, value);
    return this;
  }

  /** Removes the value stored under `key`; `true` if there was one. */
  delete(key: ResiliencePropertyKey<unknown>): boolean {
    return this.map.delete(key.key);
  }

  /** How many entries the bag holds. */
  get size(): number {
    return this.map.size;
  }

  /** The raw entries, keyed by the keys' names. */
  entries(): IterableIterator<[string, unknown]> {
    return this.map.entries();
  }

  /** Copies every entry of `other` into this bag, replacing entries with the same key. */
  addOrReplace(other: ResilienceProperties): this {
    for (const [k, v] of other.map) this.map.set(k, v);
    return this;
  }

  /** Removes every entry. */
  clear(): void {
    this.map.clear();
  }
}
