// Starts one redis-server on a free loopback port for the whole test run (Debian's redis-server; .ci/run
// installs it). Tests read REDIS_URL and REDIS_SERVER_BIN; globalTeardown stops the server.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function findRedisServer() {
  for (const candidate of [process.env.REDIS_SERVER_BIN, '/usr/bin/redis-server', 'redis-server']) {
    if (!candidate) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next one
    }
  }
  throw new Error('redis-server is not installed: run `apt-get install -y redis-server` (bash .ci/run does).');
}

export default async function globalSetup() {
  const bin = findRedisServer();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-redis-'));
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  child.stdout.removeAllListeners('data');
  child.stderr.removeAllListeners('data');
  child.stdout.resume();
  child.stderr.resume();
  process.env.REDIS_URL = `redis://127.0.0.1:${port}`;
  process.env.REDIS_SERVER_BIN = bin;
  globalThis.__REDIS_SERVER__ = child;
}
