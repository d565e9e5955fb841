import { describe, expect, it } from '@jest/globals';
import {
  ClientProxyFactory,
  MqttRecord,
  NatsRecord,
  RmqRecord,
  Transport,
  type ClientOptions,
} from '@nestjs/microservices';
import { transportMetadataWriter } from '../../src/nest/microservices/transport-metadata.writer.js';

/** Which clients carry the budget in their transport's metadata (the clients are made, never connected). */
describe('transportMetadataWriter', () => {
  const nats = { servers: ['nats://127.0.0.1:1'] };
  const rmq = { urls: ['amqp://127.0.0.1:1'], queue: 'q' };
  const mqtt = { url: 'mqtt://127.0.0.1:1' };
  const ownSerializer = { serialize: (packet: unknown) => JSON.stringify(packet) };
  const writerOf = (options: ClientOptions) => transportMetadataWriter(ClientProxyFactory.create(options));
  const entries = { 'x-request-deadline-ms': '1500' };

  it("writes the records of Nest's NATS, RabbitMQ and MQTT 5 clients", () => {
    expect(writerOf({ transport: Transport.NATS, options: nats })!({ a: 1 }, entries)).toBeInstanceOf(NatsRecord);
    const rmqRecord = writerOf({ transport: Transport.RMQ, options: rmq })!({ a: 1 }, entries);
    expect(rmqRecord).toEqual(new RmqRecord({ a: 1 }, { headers: entries }));
    const mqttRecord = writerOf({ transport: Transport.MQTT, options: { ...mqtt, protocolVersion: 5 } })!(
      { a: 1 },
      entries,
    );
    expect(mqttRecord).toEqual(new MqttRecord({ a: 1 }, { properties: { userProperties: entries } }));
  });

  it('keeps the options of a record the caller built', () => {
    const write = writerOf({ transport: Transport.RMQ, options: rmq })!;
    const built = new RmqRecord({ a: 1 }, { priority: 3, headers: { 'x-tenant': 'blue' } });
    expect(write(built, entries)).toEqual(
      new RmqRecord({ a: 1 }, { priority: 3, headers: { 'x-tenant': 'blue', ...entries } }),
    );
    expect(built.options).toEqual({ priority: 3, headers: { 'x-tenant': 'blue' } }); // the caller's is left as it is
  });

  it('has nothing for TCP, Redis, MQTT 3.1.1, or a client with a serializer of its own', () => {
    expect(writerOf({ transport: Transport.TCP, options: { port: 1 } })).toBeUndefined();
    expect(writerOf({ transport: Transport.REDIS, options: { port: 1 } })).toBeUndefined();
    expect(writerOf({ transport: Transport.MQTT, options: mqtt })).toBeUndefined();
    expect(writerOf({ transport: Transport.NATS, options: { ...nats, serializer: ownSerializer } })).toBeUndefined();
    expect(writerOf({ transport: Transport.RMQ, options: { ...rmq, serializer: ownSerializer } })).toBeUndefined();
    expect(
      writerOf({ transport: Transport.MQTT, options: { ...mqtt, protocolVersion: 5, serializer: ownSerializer } }),
    ).toBeUndefined();
  });
});
