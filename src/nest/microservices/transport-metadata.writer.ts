import { createRequire } from 'node:module';
import {
  ClientMqtt,
  ClientNats,
  ClientRMQ,
  MqttRecord,
  NatsRecord,
  RmqRecord,
  type ClientProxy,
} from '@nestjs/microservices';
import {
  MqttRecordSerializer,
  NatsRecordSerializer,
  RmqRecordSerializer,
} from '@nestjs/microservices/serializers/index.js';

/**
 * Puts entries into the transport's own metadata of a message: returns what to hand to the client in
 * place of `data` — the record of its transport (a new one; a record the caller built keeps its options
 * and headers, with the entries added).
 *
 * @internal
 */
export type TransportMetadataWriter = (data: unknown, entries: Readonly<Record<string, string>>) => unknown;

/** The part of NATS's `MsgHdrs` used here. */
interface NatsHeaders {
  keys(): string[];
  values(key: string): string[];
  append(key: string, value: string): void;
  set(key: string, value: string): void;
}

let natsHeaders: (() => NatsHeaders) | undefined;

/** NATS headers, made by the NATS client library `ClientNats` has loaded already. */
function newNatsHeaders(): NatsHeaders {
  natsHeaders ??= (createRequire(import.meta.url)('@nats-io/transport-node') as { headers: () => NatsHeaders }).headers;
  return natsHeaders();
}

function serializerOf(client: ClientProxy): unknown {
  return (client as unknown as { serializer?: unknown }).serializer;
}

/**
 * How to put entries into the metadata of the messages `client` sends: Nest's NATS client (headers),
 * RabbitMQ client (message headers) and MQTT client with `protocolVersion: 5` (user properties), each
 * with the record serializer Nest gives it (a serializer of one's own may not know records).
 * `undefined` for every other client: TCP, Redis, MQTT 3.1.1 and the rest have no such metadata.
 *
 * @internal
 */
export function transportMetadataWriter(client: ClientProxy): TransportMetadataWriter | undefined {
  const serializer = serializerOf(client);
  if (client instanceof ClientNats && serializer instanceof NatsRecordSerializer) return writeNatsHeaders;
  if (client instanceof ClientRMQ && serializer instanceof RmqRecordSerializer) return writeRmqHeaders;
  if (client instanceof ClientMqtt && serializer instanceof MqttRecordSerializer) {
    const version = (client as unknown as { options?: { protocolVersion?: unknown } }).options?.protocolVersion;
    return version === 5 ? writeMqttUserProperties : undefined;
  }
  return undefined;
}

function writeNatsHeaders(data: unknown, entries: Readonly<Record<string, string>>): unknown {
  const record = data instanceof NatsRecord ? (data as NatsRecord<unknown, NatsHeaders | undefined>) : undefined;
  const headers = newNatsHeaders();
  const given = record?.headers;
  if (given) for (const key of given.keys()) for (const value of given.values(key)) headers.append(key, value);
  for (const [key, value] of Object.entries(entries)) headers.set(key, value);
  return new NatsRecord(record ? record.data : data, headers);
}

function writeRmqHeaders(data: unknown, entries: Readonly<Record<string, string>>): unknown {
  const record = data instanceof RmqRecord ? (data as RmqRecord<unknown>) : undefined;
  const options = record?.options;
  return new RmqRecord(record ? record.data : data, { ...options, headers: { ...options?.headers, ...entries } });
}

function writeMqttUserProperties(data: unknown, entries: Readonly<Record<string, string>>): unknown {
  const record = data instanceof MqttRecord ? (data as MqttRecord<unknown>) : undefined;
  const options = record?.options;
  const properties = options?.properties;
  return new MqttRecord(record ? record.data : data, {
    ...options,
    properties: { ...properties, userProperties: { ...properties?.userProperties, ...entries } },
  });
}
