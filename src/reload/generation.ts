import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { GatewayConfig } from '../config/types.ts';
import type { GatewayState } from '../http/state.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { Breakers } from '../routing/breaker.ts';

/**
 * One version of the configuration in force: its catalogue, providers and app (issue #16). The
 * server hands each new request to the newest generation; a request keeps the generation it
 * arrived on to its end, streams included, so a reload never changes what it started with: its
 * route, its prices, its plugin.
 */
export class Generation {
  readonly config: GatewayConfig;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly app: Koa<GatewayState>;
  readonly breakers: Breakers;
  /**
   * The generation this one replaced, until it is idle: an unchanged provider's plugin is shared
   * by every generation since it was loaded, so it may be closed only once all older ones are idle.
   */
  #previous: Generation | undefined;
  readonly #callback: (req: IncomingMessage, res: ServerResponse) => unknown;
  #active = 0;
  #idle: (() => void)[] = [];
  /** Bound once: a per-request listener, not a per-request closure. */
  readonly #release = (): void => {
    if (--this.#active > 0) return;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  };

  constructor(config: GatewayConfig, providers: ReadonlyMap<string, LoadedProvider>, app: Koa<GatewayState>, breakers: Breakers, previous?: Generation) {
    this.config = config;
    this.providers = providers;
    this.app = app;
    this.breakers = breakers;
    this.#previous = previous;
    this.#callback = app.callback();
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.#active++;
    // `on`, not `once`: a response closes once, and `once` wraps the listener in a new closure,
    // removed again as it fires, for every request (issue #17, thirty-fifth session).
    res.on('close', this.#release);
    void this.#callback(req, res);
  }

  /**
   * Resolves once no request is being served on this generation nor on any older one. New
   * requests only reach the newest generation, so an old one that is idle stays idle.
   */
  async idle(): Promise<void> {
    if (this.#active > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    if (this.#previous) {
      await this.#previous.idle();
      this.#previous = undefined;
    }
  }
}
