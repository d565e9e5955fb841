/**
 * Binds a decorated method's instance on its first call when the module has not bound it yet — a
 * testing module that was compiled but never initialised. Each `ResilienceModule` registers one binder;
 * a binder answers only for instances its application created, so an instance made with `new` outside
 * Nest still runs the bare method.
 *
 * @internal
 */
export interface FirstCallBinder {
  /**
   * Binds every decorated method of the application if `instance` is one of its instances, and says
   * whether it was. Throws the start-up `ResilienceValidationError` when the configuration is invalid.
   */
  bindOnFirstCall(instance: object): boolean;
}

/** Weak, so a testing module that is never closed does not stay alive through its binder. */
const binders = new Set<WeakRef<FirstCallBinder>>();

/** Registers a binder; the returned function removes it. @internal */
export function registerFirstCallBinder(binder: FirstCallBinder): () => void {
  const ref = new WeakRef(binder);
  binders.add(ref);
  return () => binders.delete(ref);
}

/** Asks every live binder to bind `instance`; true when one did. @internal */
export function bindOnFirstCall(instance: unknown): boolean {
  if (typeof instance !== 'object' || instance === null || binders.size === 0) return false;
  for (const ref of binders) {
    const binder = ref.deref();
    if (!binder) binders.delete(ref);
    else if (binder.bindOnFirstCall(instance)) return true;
  }
  return false;
}
