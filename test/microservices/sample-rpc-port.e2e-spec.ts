import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { spawn, type ChildProcess } from 'node:child_process';
import { lastValueFrom } from 'rxjs';
import { weatherRpcConfigFromEnv } from '../../sample-app/rpc/weather-rpc.config.js';
import { SampleBuild } from '../e2e/sample-cluster.fixture.js';

/** The built sample started as `npm run start:sample` does, with the variables of `env`. */
class SampleProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  text = '';

  constructor(entry: string, env: Record<string, string | undefined>) {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete merged[name];
      else merged[name] = value;
    }
    this.child = spawn(process.execPath, [entry], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.text += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.text += chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves once the start-up text matches `pattern` (bounded); rejects when the process exits first. */
  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    void this.exited.then(() => (exited = true));
    for (;;) {
      const match = pattern.exec(this.text);
      if (match) return match;
      if (exited) throw new Error(`the sample exited before printing ${pattern}:\n${this.text}`);
      if (Date.now() > deadline) throw new Error(`the sample did not print ${pattern}:\n${this.text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

describe('sample app: RPC_PORT=0 serves the weather service on a free port and prints it', () => {
  let build: SampleBuild;
  let sample: SampleProcess;
  let url: string;
  let rpcPort: number;
  let client: ClientProxy | undefined;

  beforeAll(async () => {
    build = await SampleBuild.compile();
    sample = new SampleProcess(build.entry, {
      PORT: '0',
      RPC_PORT: '0',
      REDIS_URL: undefined,
      RESILIENCE_CONFIG: undefined,
      ADMIN_TOKEN: undefined,
    });
    url = (await sample.waitFor(/^nest-resilience sample on (http:\/\/\S+) /m))[1];
    rpcPort = Number((await sample.waitFor(/RPC client \(TCP :(\d+)\)/))[1]);
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await sample?.stop();
    build?.dispose();
  });

  it('prints the port it serves on, not 0', () => {
    expect(rpcPort).toBeGreaterThan(0);
    expect(sample.text).toMatch(new RegExp(`^RPC client \\(TCP :${rpcPort}\\) +${url}/rpc/weather/lisbon$`, 'm'));
  });

  it('answers over TCP on the printed port, and its own client reaches it there', async () => {
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: rpcPort } });
    // The weather upstream fails two calls in three: its 503 comes back as a remote error, still an answer.
    const answer = await lastValueFrom(client.send('weather.forecast', { city: 'porto' })).catch((e: unknown) => e);
    const { city, status } = answer as { city?: string; status?: number };
    expect(city === 'porto' || status === 503).toBe(true);
    const response = await fetch(`${url}/rpc/weather/lisbon`);
    expect(response.status).toBe(200);
    await expect(response.json()).resolves.toMatchObject({ city: 'lisbon' });
  });
});

describe('sample app: RPC_PORT', () => {
  it('is a port number from 0 to 65535; anything else fails the start, naming the value', () => {
    expect(weatherRpcConfigFromEnv({})).toEqual({ host: '127.0.0.1', port: 3001 });
    expect(weatherRpcConfigFromEnv({ RPC_PORT: '0' }).port).toBe(0);
    for (const bad of ['abc', '-1', '65536', '3001.5']) {
      expect(() => weatherRpcConfigFromEnv({ RPC_PORT: bad })).toThrow(`not "${bad}"`);
    }
  });
});
