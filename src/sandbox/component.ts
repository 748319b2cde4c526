// A sandbox server process with its readiness probe: start waits until it is healthy, restart
// brings it back on the same ports and data.
import { ManagedProcess, type ProcessSpec } from './process.ts';
import { probe, waitHealthy } from './net.ts';

export class ComponentError extends Error {
  override readonly name = 'ComponentError';
}

export class Component {
  readonly process: ManagedProcess;
  /** Where readiness is probed; undefined for a component that serves no health endpoint. */
  readonly healthUrl: string | undefined;
  private readonly readyTimeoutMs: number;

  constructor(spec: ProcessSpec, healthUrl: string | undefined, readyTimeoutMs = 90_000) {
    this.process = new ManagedProcess(spec);
    this.healthUrl = healthUrl;
    this.readyTimeoutMs = readyTimeoutMs;
  }

  get name(): string {
    return this.process.spec.name;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Starts the process and waits until it is healthy; on failure it is stopped and the error carries its log tail. */
  async start(): Promise<void> {
    // Nothing of this component listens yet: a server answering there is another process's, which
    // would pass for this one's readiness while its own listen fails. Said as the address in use,
    // so that callers drawing fresh ports on EADDRINUSE do.
    if (this.healthUrl && (await probe(this.healthUrl)) !== undefined) throw new ComponentError(`${this.name}: EADDRINUSE, another process already answers at ${this.healthUrl}`);
    this.process.start();
    await this.waitReady();
  }

  async waitReady(): Promise<void> {
    if (!this.healthUrl) {
      // No endpoint to ask: require that it survives its first second.
      await new Promise((r) => setTimeout(r, 1000));
      if (!this.process.running) throw this.failure('exited during start-up');
      return;
    }
    const outcome = await waitHealthy(this.healthUrl, () => !this.process.running, this.readyTimeoutMs);
    if (outcome === 'ready') return;
    await this.process.kill();
    throw this.failure(outcome === 'exited' ? 'exited during start-up' : `not healthy after ${this.readyTimeoutMs / 1000}s`);
  }

  stop(): Promise<void> {
    return this.process.stop();
  }

  kill(): Promise<void> {
    return this.process.kill();
  }

  pause(): void {
    this.process.pause();
  }

  resume(): void {
    this.process.resume();
  }

  /** Stops (gracefully) if running, starts again with the same arguments, and waits until healthy. */
  async restart(): Promise<void> {
    await this.process.stop();
    await this.start();
  }

  private failure(what: string): ComponentError {
    return new ComponentError(`${this.name} ${what}; last lines of ${this.process.spec.logFile}:\n${this.process.logTail()}`);
  }
}
