import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT, type SampleBuild } from './sample-cluster.fixture.js';

/** How a process ended: its exit code, or the signal that ended it. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * The built sample run as the README says (`node …/sample-app/main.js` with its environment), as a child
 * process of its own, so real signals reach it. Its output (stdout and stderr) is collected in `text`.
 */
export class SampleProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<ProcessExit>;
  /** Everything it printed so far. */
  text = '';

  constructor(build: SampleBuild, env: Record<string, string | undefined>) {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete merged[name];
      else merged[name] = value;
    }
    this.child = spawn(process.execPath, [build.entry], { cwd: ROOT, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.text += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.text += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('close', (code, signal) => resolve({ code, signal }));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Whether it has not exited yet. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Resolves once `pattern` matches its output from `from` on (a position in `text`); rejects if the
   * process exits first, or after `budget` ms (a bound for a stuck process, far above a slow machine's need).
   */
  async output(pattern: RegExp, from = 0, budget = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + budget;
    for (;;) {
      const match = pattern.exec(this.text.slice(from));
      if (match) return match;
      if (!this.running) throw new Error(`exited before printing ${pattern}:\n${this.text}`);
      if (Date.now() > deadline) throw new Error(`did not print ${pattern} within ${budget} ms:\n${this.text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops it with SIGKILL if it still runs (clean-up after a failed test). */
  async kill(): Promise<void> {
    if (this.running) this.child.kill('SIGKILL');
    await this.exited.catch(() => undefined);
  }
}
