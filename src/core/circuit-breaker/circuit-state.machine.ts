import { MAX_TIMER_DELAY } from '../strategy/options.validation.js';
import {
  CIRCUIT_SNAPSHOT_VERSION,
  type CircuitAcquireResult,
  type CircuitCallResult,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitSnapshot,
  type CircuitState,
  type CircuitTransition,
  type CircuitTransitionReason,
} from './circuit-state.model.js';
import { createHealthMetrics } from './health-metrics.factory.js';
import type { HealthMetrics } from './health.metrics.js';

const ISOLATED: CircuitAcquireResult = { state: 'isolated' };

/**
 * Whether a half-open circuit admits one more probe: at most `permittedCallsInHalfOpen` probes run at a
 * time (a succeeded probe frees its place), and no more are issued than needed to reach
 * `successThresholdInHalfOpen` (or `permittedCallsInHalfOpen`, whichever is larger). Shared stores apply
 * the same rule.
 *
 * @internal
 */
export function admitsAnotherProbe(policy: CircuitPolicy, issued: number, succeeded: number): boolean {
  const { permittedCallsInHalfOpen: permitted, successThresholdInHalfOpen: threshold } = policy;
  return issued - succeeded < permitted && issued < Math.max(permitted, threshold);
}

/**
 * One circuit's state machine, applied under the caller's exclusive access (a single-threaded in-memory
 * store, or a store that serialises access to a key). Open → half-open is decided from timestamps on the
 * next call: no timer runs while a circuit is open.
 *
 * @internal
 */
export class CircuitStateMachine {
  state: CircuitState = 'closed';
  generation = 0;
  blockedUntil = 0;
  lastBreakDuration = 0;
  halfOpenSince = 0;
  halfOpenAttempts = 0;
  probesIssued = 0;
  probesSucceeded = 0;
  lastTransitionAt = 0;
  private readonly metrics: HealthMetrics;
  /** The answer for every call while closed in this generation: no allocation per call. */
  private closedAdmit: CircuitAcquireResult | undefined;

  /**
   * `snapshot` restores a circuit. With `continued`, it is the same circuit under a new policy (a reloaded
   * pipeline in this process): permits in flight stay valid. Otherwise it comes from elsewhere (a file, a
   * restarted process): earlier permits are void, and a half-open circuit probes again.
   */
  constructor(
    private readonly policy: CircuitPolicy,
    snapshot?: CircuitSnapshot,
    continued = false,
  ) {
    this.metrics = createHealthMetrics(policy, snapshot?.metrics);
    if (snapshot) this.restore(snapshot, continued);
  }

  acquire(now: number): CircuitAcquireResult {
    switch (this.state) {
      case 'closed':
        return (this.closedAdmit ??= { state: 'closed', permit: { generation: this.generation, probe: false } });
      case 'isolated':
        return ISOLATED;
      case 'open': {
        if (now < this.blockedUntil) return { state: 'open', retryAfter: this.blockedUntil - now };
        const transition = this.moveTo('half-open', now, 'break-elapsed');
        this.halfOpenSince = now;
        this.probesIssued = 1;
        this.probesSucceeded = 0;
        return { state: 'half-open', permit: { generation: this.generation, probe: true }, transition };
      }
      case 'half-open': {
        if (now - this.halfOpenSince >= this.policy.maxHalfOpenWait) {
          // The probes never reported back: treat the period as failed rather than wait forever.
          const transition = this.open(now, 'half-open-timeout');
          return { state: 'open', retryAfter: this.blockedUntil - now, transition };
        }
        if (admitsAnotherProbe(this.policy, this.probesIssued, this.probesSucceeded)) {
          this.probesIssued++;
          return { state: 'half-open', permit: { generation: this.generation, probe: true } };
        }
        return {
          state: 'half-open',
          retryAfter: Math.max(1, this.lastBreakDuration),
          verdictDueAt: this.halfOpenSince + this.policy.maxHalfOpenWait,
        };
      }
    }
  }

  record(permit: CircuitPermit, result: CircuitCallResult, now: number): CircuitTransition | undefined {
    // An outcome from an earlier period (before an opening, a closing, an isolation) says nothing now.
    if (permit.generation !== this.generation) return undefined;
    if (permit.probe) {
      if (result === 'ignored') {
        this.probesIssued--; // give the permit back: a cancelled probe proves nothing
        return undefined;
      }
      if (result === 'failure') return this.open(now, 'probe-failed');
      if (++this.probesSucceeded >= this.policy.successThresholdInHalfOpen) return this.close(now, 'probes-succeeded');
      return undefined;
    }
    if (result === 'success') {
      this.metrics.success(now);
    } else if (result === 'failure') {
      this.metrics.failure(now);
      if (this.metrics.shouldBreak(now)) return this.open(now, 'failure-threshold');
    }
    return undefined;
  }

  isolate(now: number): CircuitTransition | undefined {
    if (this.state === 'isolated') return undefined;
    return this.moveTo('isolated', now, 'manual-isolate');
  }

  close(now: number, reason: CircuitTransitionReason = 'manual-close'): CircuitTransition | undefined {
    const from = this.state;
    this.metrics.reset();
    this.halfOpenAttempts = 0;
    this.probesIssued = 0;
    this.probesSucceeded = 0;
    if (from === 'closed') return undefined;
    return this.moveTo('closed', now, reason);
  }

  toSnapshot(): CircuitSnapshot {
    return {
      version: CIRCUIT_SNAPSHOT_VERSION,
      state: this.state,
      generation: this.generation,
      blockedUntil: this.blockedUntil,
      lastBreakDuration: this.lastBreakDuration,
      halfOpenSince: this.halfOpenSince,
      halfOpenAttempts: this.halfOpenAttempts,
      probesIssued: this.probesIssued,
      probesSucceeded: this.probesSucceeded,
      lastTransitionAt: this.lastTransitionAt,
      metrics: this.metrics.toSnapshot(),
    };
  }

  private restore(s: CircuitSnapshot, continued: boolean): void {
    this.generation = continued ? s.generation : s.generation + 1;
    this.blockedUntil = s.blockedUntil;
    this.lastBreakDuration = s.lastBreakDuration;
    this.halfOpenAttempts = s.halfOpenAttempts;
    this.lastTransitionAt = s.lastTransitionAt;
    if (continued) {
      this.state = s.state;
      this.halfOpenSince = s.halfOpenSince;
      this.probesIssued = s.probesIssued;
      this.probesSucceeded = s.probesSucceeded;
    } else if (s.state === 'half-open') {
      // The probes in flight died with the process that held them: probe again at once.
      this.state = 'open';
      this.blockedUntil = s.halfOpenSince;
    } else {
      this.state = s.state;
    }
  }

  private open(now: number, reason: CircuitTransitionReason): CircuitTransition {
    const health = this.metrics.health(now);
    this.halfOpenAttempts = this.state === 'half-open' ? this.halfOpenAttempts + 1 : 0;
    const generator = this.policy.breakDurationGenerator;
    let duration = this.policy.breakDuration;
    if (generator) {
      const generated = generator({
        failureCount: health.failures,
        failureRatio: health.failureRatio,
        halfOpenAttempts: this.halfOpenAttempts,
      });
      if (typeof generated === 'number' && generated >= 0) duration = Math.min(generated, MAX_TIMER_DELAY);
    }
    this.blockedUntil = now + duration;
    this.lastBreakDuration = duration;
    this.probesIssued = 0;
    this.probesSucceeded = 0;
    const transition = this.moveTo('open', now, reason);
    return { ...transition, breakDuration: duration, health };
  }

  private moveTo(to: CircuitState, now: number, reason: CircuitTransitionReason): CircuitTransition {
    const from = this.state;
    this.state = to;
    this.generation++;
    this.closedAdmit = undefined;
    this.lastTransitionAt = now;
    return { from, to, reason };
  }
}
