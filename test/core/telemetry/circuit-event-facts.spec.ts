import { describe, expect, it } from '@jest/globals';
import {
  CircuitBreakerStateProvider,
  describeResilienceEvent,
  formatEventFacts,
  resilienceEventDescriptor,
  resilienceEventOutcome,
  ResiliencePipelineBuilder,
  type EventFact,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { settle } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const attributes = (facts: readonly EventFact[]): Record<string, EventFact['value']> =>
  Object.fromEntries(facts.filter((f) => f.attribute !== undefined).map((f) => [f.attribute as string, f.value]));

const down = new Error('dependency down');

/** The figures a log line, a span and the admin API show for each event a real breaker raised. */
async function circuitLifecycle(): Promise<Map<string, ResilienceEvent>> {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const pipeline = new ResiliencePipelineBuilder({
    name: 'billing',
    timeProvider: time,
    telemetryListeners: [listener],
  })
    .addCircuitBreaker({
      kind: 'consecutive',
      failureThreshold: 2,
      breakDuration: 100,
      stateProvider: new CircuitBreakerStateProvider(),
    })
    .build();
  await settle(pipeline.execute(() => Promise.reject(down)));
  await settle(pipeline.execute(() => Promise.reject(down)));
  time.advance(40);
  await settle(pipeline.execute(() => 'ok'));
  time.advance(60);
  await pipeline.execute(() => 'ok');
  return new Map(listener.events.map((e) => [e.eventName, e]));
}

describe('the figures of the circuit breaker events', () => {
  it('OnCircuitOpened: state, reason, break duration and failures over throughput; an error that changes state', async () => {
    const opened = (await circuitLifecycle()).get('OnCircuitOpened')!;
    const facts = describeResilienceEvent('OnCircuitOpened', opened.arguments);
    expect(attributes(facts)).toEqual({
      'circuit.state': 'open',
      'circuit.reason': 'failure-threshold',
      'circuit.break_duration': 100,
    });
    expect(formatEventFacts(facts)).toEqual(['reason=failure-threshold', 'breakDuration=100ms', 'failures=2/2']);
    expect(resilienceEventDescriptor('OnCircuitOpened')).toMatchObject({ severity: 'error', changesState: true });
    // Opened by hand: no health figures.
    const manual = describeResilienceEvent('OnCircuitOpened', { reason: 'manual', breakDuration: 5_000 });
    expect(formatEventFacts(manual)).toEqual(['reason=manual', 'breakDuration=5000ms']);
    expect(manual).toHaveLength(3); // state, reason, break duration: nothing for the missing health
  });

  it('OnCircuitClosed and OnCircuitHalfOpened: the state they enter, the reason it closed', async () => {
    const events = await circuitLifecycle();
    const closed = describeResilienceEvent('OnCircuitClosed', events.get('OnCircuitClosed')!.arguments);
    expect(attributes(closed)).toEqual({ 'circuit.state': 'closed', 'circuit.reason': 'probes-succeeded' });
    expect(formatEventFacts(closed)).toEqual(['reason=probes-succeeded']);
    const halfOpened = describeResilienceEvent('OnCircuitHalfOpened', events.get('OnCircuitHalfOpened')!.arguments);
    expect(attributes(halfOpened)).toEqual({ 'circuit.state': 'half-open' });
    expect(formatEventFacts(halfOpened)).toEqual([]);
    expect(resilienceEventDescriptor('OnCircuitClosed')).toMatchObject({
      severity: 'information',
      changesState: true,
    });
    expect(resilienceEventDescriptor('OnCircuitHalfOpened')).toMatchObject({ severity: 'warning', changesState: true });
  });

  it('OnCircuitRejected: the state that refused and, when known, how long until it may let calls through', async () => {
    const rejected = (await circuitLifecycle()).get('OnCircuitRejected')!;
    const facts = describeResilienceEvent('OnCircuitRejected', rejected.arguments);
    expect(attributes(facts)).toEqual({ 'circuit.state': 'open', 'retry.after': 60 });
    expect(formatEventFacts(facts)).toEqual(['state=open', 'retryAfter=60ms']);
    const isolated = describeResilienceEvent('OnCircuitRejected', { state: 'isolated', retryAfter: undefined });
    expect(attributes(isolated)).toEqual({ 'circuit.state': 'isolated' });
    expect(formatEventFacts(isolated)).toEqual(['state=isolated']);
    expect(isolated).toHaveLength(1);
    expect(resilienceEventDescriptor('OnCircuitRejected')).toMatchObject({ severity: 'debug' });
  });

  it('a state store outage is an error carrying the store failure as its outcome; its recovery carries none', () => {
    const failure = new Error('store down');
    expect(resilienceEventDescriptor('OnStateStoreUnavailable')).toMatchObject({ severity: 'error' });
    expect(resilienceEventOutcome('OnStateStoreUnavailable', { error: failure })).toEqual({
      ok: false,
      error: failure,
    });
    expect(resilienceEventDescriptor('OnStateStoreRestored')).toMatchObject({ severity: 'information' });
    expect(resilienceEventOutcome('OnStateStoreRestored', {})).toBeUndefined();
    expect(describeResilienceEvent('OnStateStoreRestored', {})).toEqual([]);
  });
});
