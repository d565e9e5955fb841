export default async function globalTeardown() {
  const child = globalThis.__REDIS_SERVER__;
  if (!child || child.exitCode !== null) return;
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}
